"""What a model request carries besides the page: a compact answer schema, and the request's layout.

A request is laid out for the providers' prompt caching: first what is the same for every page of a run
(the instructions, then the answer schema when the prompt carries it), byte for byte, then what belongs to
one page (its pixel size, the coordinates asked for) and its image.

The answer schema is the answer model's JSON schema with only what the model must write: no titles that
pydantic makes up from field names, no defaults, no fields the package fills itself (``image_data``,
``image_path``, ``group_id``), ``anyOf`` for unions (what structured-output providers accept), and
written without indentation. Where litellm reports that a model supports a response schema, the schema goes
there (``response_format``), once, and not into the prompt.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from typing import Any

from pydantic import BaseModel

__all__ = [
    "INTERNAL_FIELDS",
    "compact_schema",
    "family_of",
    "response_format",
    "schema_instruction",
    "supports_response_schema",
]

#: Fields of the answer models that the package fills, never the model.
INTERNAL_FIELDS = frozenset({"image_data", "image_path", "group_id"})
# Titles pydantic makes up from field names, defaults, validation limits the package checks itself, and
# descriptions (the instructions of each request say what every field holds).
_DROPPED_KEYS = ("title", "default", "discriminator", "description", "minLength")

_CACHE: dict[type[BaseModel], dict[str, Any]] = {}
_CACHE_LOCK = threading.Lock()


def _strip(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):
            result[key] = {name: _strip(item) for name, item in value.items() if name not in INTERNAL_FIELDS}
        elif key == "required" and isinstance(value, list):
            result[key] = [name for name in value if name not in INTERNAL_FIELDS]
        elif key == "oneOf":
            result["anyOf"] = _strip(value)
        else:
            result[key] = _strip(value)
    # ``str | None`` is ``anyOf [string, null]`` in pydantic's schema; the shorter type list says the same.
    options = result.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = next(option for option in options if option != {"type": "null"})
        if set(other) == {"type"} and isinstance(other["type"], str):
            result.pop("anyOf")
            result["type"] = [other["type"], "null"]
    if result.get("required") == []:
        result.pop("required")
    return result


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with every ``$ref`` to ``$defs`` replaced by its definition (the answer models have no
    recursive types)."""
    if isinstance(node, list):
        return [_resolve(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _resolve(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    return {key: _resolve(value, defs) for key, value in node.items() if key != "$defs"}


def _merge(options: list[dict[str, Any]]) -> dict[str, Any]:
    """One object schema for a union of object schemas: every field of any of them, the values each may
    take merged (enums and consts into one enum), required only where all require it. The instructions say
    which fields go with which "type"; the answer is still validated against the exact union."""
    properties: dict[str, list[Any]] = {}
    for option in options:
        for name, value in option.get("properties", {}).items():
            if value not in properties.setdefault(name, []):
                properties[name].append(value)
    merged: dict[str, Any] = {}
    for name, values in properties.items():
        if len(values) == 1:
            merged[name] = values[0]
        elif all(("enum" in value or "const" in value) and value.get("type") == "string" for value in values):
            choices = {item for value in values for item in value.get("enum", [value.get("const")])}
            merged[name] = {"type": "string", "enum": sorted(choices)}
        else:
            merged[name] = {"anyOf": values}
    required = set.intersection(*(set(option.get("required", [])) for option in options))
    if "enum" in merged.get("type", {}):
        required.add("type")  # the discriminator: which kind of node each one is
    result: dict[str, Any] = {"type": "object", "properties": merged}
    if required:
        result["required"] = sorted(required)
    return result


def _flatten(node: Any) -> Any:
    if isinstance(node, list):
        return [_flatten(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _flatten(value) for key, value in node.items()}
    options = node.get("anyOf")
    if (
        isinstance(options, list)
        and len(options) > 2
        and all(option.get("type") == "object" for option in options)
    ):
        return _merge(options)
    return node


def compact_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model is shown for ``model``: only what it must write (see the module). A union of
    node types (a page's nodes) is shown as one object type with every field, which is a fraction of the
    size; the answer is validated against the exact types all the same."""
    with _CACHE_LOCK:
        if model not in _CACHE:
            schema = model.model_json_schema()
            schema = _resolve(schema, schema.get("$defs", {}))
            _CACHE[model] = _flatten(_strip(schema))
        return copy.deepcopy(_CACHE[model])


def schema_text(model: type[BaseModel]) -> str:
    """The compact schema as JSON without indentation or spaces (deterministic: the same bytes each call)."""
    return json.dumps(compact_schema(model), separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def schema_instruction(model: type[BaseModel]) -> str:
    """The part of a prompt that carries the schema, for models without a response-schema feature."""
    return "Answer with one JSON object, and nothing else, that follows this JSON schema:\n" + schema_text(
        model
    )


def response_format(model: type[BaseModel]) -> dict[str, Any]:
    """The ``response_format`` that hands the compact schema to a provider's structured output."""
    return {
        "type": "json_schema",
        "json_schema": {"name": model.__name__, "schema": compact_schema(model), "strict": False},
    }


def family_of(model: str) -> str:
    """The provider family of a litellm model name: "openai", "anthropic", "gemini", "qwen" or "other"."""
    name = model.lower()
    base = name.rsplit("/", 1)[-1]
    base = base.removeprefix("ft:")  # fine-tuned OpenAI models: ft:gpt-4o-mini-2024-07-18:org::id
    # Bedrock names carry the maker and, for cross-region inference profiles, a region:
    # bedrock/us.anthropic.claude-3-5-sonnet-..., bedrock/converse/anthropic.claude-...
    base = re.sub(r"^(?:[a-z]{2,6}(?:-gov)?\.)?anthropic\.", "", base)
    if name.startswith(("anthropic/", "bedrock/anthropic", "vertex_ai/claude")) or base.startswith("claude"):
        return "anthropic"
    if name.startswith(("gemini/", "vertex_ai/gemini")) or base.startswith("gemini"):
        return "gemini"
    if base.startswith(("qwen", "qwen2", "qwen2.5", "qwen3")):
        return "qwen"
    if name.startswith(("azure/",)) or base.startswith(("gpt-", "chatgpt", "o1", "o3", "o4")):
        return "openai"
    return "other"


def marks_prompt_cache(model: str) -> bool:
    """Whether the fixed prefix of an Anthropic model's requests carries a ``cache_control`` marker: always
    on Anthropic's own API and Vertex AI; on Bedrock only where litellm lists prompt caching for the model
    (Bedrock refuses cache points on models without it)."""
    if not model.lower().startswith("bedrock/"):
        return True
    from litellm.utils import supports_prompt_caching

    try:
        return bool(supports_prompt_caching(model=model))
    except Exception:  # a name litellm does not know: no marker, nothing to refuse
        return False


def supports_response_schema(model: str) -> bool:
    """Whether litellm reports that ``model`` accepts a JSON schema as ``response_format``."""
    import litellm

    try:
        return bool(litellm.supports_response_schema(model=model))
    except Exception:  # an unknown model or provider: litellm cannot say, so the prompt carries the schema
        return False

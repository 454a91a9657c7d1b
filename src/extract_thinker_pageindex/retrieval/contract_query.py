"""A retrieval query written from a Contract: its name, field names, titles and descriptions."""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel

__all__ = ["query_from_contract"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", _CAMEL.sub(" ", text).replace("_", " ").lower())


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """Pydantic models inside a field's type (``Item``, ``list[Item]``, ``Item | None``...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    origin = typing.get_origin(annotation)
    if origin is not None or isinstance(annotation, types.UnionType):
        for argument in typing.get_args(annotation):
            found.extend(_models_in(argument))
    return found


def query_from_contract(contract: type[BaseModel], *, include_descriptions: bool = True) -> str:
    """The words a page holding a Contract's fields is likely to contain, as one retrieval query.

    Takes the Contract's class name, every field's name (``notice_period`` -> "notice period"), alias,
    title and description, recursively through nested models and lists of them; each word once, in
    order of appearance. Stop words are left in: the retriever drops them.

    Args:
        contract: An ExtractThinker ``Contract`` (any pydantic model) class.
        include_descriptions: Also take the fields' descriptions (usually the richest words).

    Example:
        >>> class CancellationTerms(Contract):
        ...     notice_period: str = Field(description="Days of written notice required")
        >>> query_from_contract(CancellationTerms)
        'cancellation terms notice period days of written required'
    """
    words: list[str] = []
    seen: set[str] = set()
    visited: set[type[BaseModel]] = set()

    def add(text: str | None) -> None:
        for word in _words(text or ""):
            if word not in seen:
                seen.add(word)
                words.append(word)

    def walk(model: type[BaseModel]) -> None:
        if model in visited:
            return
        visited.add(model)
        add(model.__name__)
        for name, field in model.model_fields.items():
            add(name)
            add(field.alias)
            add(field.title)
            if include_descriptions:
                add(field.description)
            for nested in _models_in(field.annotation):
                walk(nested)

    if not (isinstance(contract, type) and issubclass(contract, BaseModel)):
        from ..errors import InvalidOptionError

        raise InvalidOptionError(f"query_from_contract takes a Contract class, not {contract!r}.")
    walk(contract)
    return " ".join(words)

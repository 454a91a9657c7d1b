"""The key of a page index: what a build depends on (the content, the options that change the result and
the versions that build it), shared by the loader's cache and the batch manifest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ._version import __version__
from .document.model import FORMAT_VERSION

__all__ = ["NOT_IN_KEY", "build_settings", "cache_key", "options_key"]

#: Options of ``build_index`` that do not change the index (so they stay out of every key).
NOT_IN_KEY = frozenset({"progress", "parallel", "password", "on_page_error", "doc_name", "ocr_workers"})


_OCR_OPTIONS = ("ocr", "ocr_engine", "ocr_languages", "ocr_workers", "ocr_dpi")


def _model_key(model: Any) -> str | dict[str, Any] | None:
    """A model by name; with the settings of a ``ModelClient`` that change what it answers (the page
    pixels, the box coordinates, a forced structured-output path) when they differ from the name's own."""
    if model is None:
        return None
    name = str(getattr(model, "model", model))
    if isinstance(model, str):
        return name
    from .llm.client import default_bbox_scale, default_image_limits

    changed: dict[str, Any] = {}
    limits = getattr(model, "image_limits", None)
    if limits is not None and limits != default_image_limits(name):
        changed["image_limits"] = repr(limits)
    scale = getattr(model, "bbox_scale", None)
    if scale is not None and scale != default_bbox_scale(name):
        changed["bbox_scale"] = scale
    if getattr(model, "structured_output_option", None) is not None:
        changed["structured_output"] = model.structured_output_option
    return {"name": name, **changed} if changed else name


def build_settings(options: Mapping[str, Any], content_type: str | None) -> dict[str, Any]:
    """The build options that change an index, with the model by name (and the client settings that
    change its answers), the source kind and the versions."""
    from .ocr.settings import ocr_settings

    settings = {
        key: (_model_key(value) if key == "model" else value)
        for key, value in sorted(options.items())
        if key not in NOT_IN_KEY and key not in _OCR_OPTIONS
    }
    # OCR by its effective settings, defaults included: an index of a scan read with other settings (or
    # by a release whose default differs) is another index.
    ocr = ocr_settings(**{key: options[key] for key in _OCR_OPTIONS if key in options})
    settings.update(ocr=ocr.key(), content_type=content_type, format=FORMAT_VERSION, version=__version__)
    return settings


def _settings_json(options: Mapping[str, Any], content_type: str | None) -> bytes:
    return json.dumps(build_settings(options, content_type), sort_keys=True, default=str).encode()


def cache_key(data: bytes, content_type: str | None, options: Mapping[str, Any]) -> str:
    """The content's hash together with :func:`build_settings`: one name for one index (40 hex digits)."""
    digest = hashlib.sha256(data)
    digest.update(_settings_json(options, content_type))
    return digest.hexdigest()[:40]


def options_key(options: Mapping[str, Any], content_type: str | None) -> str:
    """The hash of :func:`build_settings` alone (40 hex digits), for a record that keeps the content's hash
    apart."""
    return hashlib.sha256(_settings_json(options, content_type)).hexdigest()[:40]

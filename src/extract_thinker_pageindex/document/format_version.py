"""The version of the page index format: what each version added, which ones this release reads, and the one
place where a document of an older version is brought up to date.

Versions are ``"MAJOR.MINOR"``. A minor version only adds optional fields or new values, so a document of
any 1.x version is read: an older one gets the fields it lacks at their defaults, and a newer one loses the
fields this release does not know (an index of a newer minor version that uses new values of known fields,
such as a new node type or 1.3's JPEG picture files for a 1.2 release, is refused, and ``load_index`` then
says that a newer release wrote it). Another major version is refused.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "FORMAT_HISTORY",
    "FORMAT_VERSION",
    "format_problem",
    "is_newer_minor",
    "readable_versions",
    "upgrade",
]

#: The version written into every ``document.json``.
FORMAT_VERSION = "1.3"

#: What each version of the format added.
FORMAT_HISTORY = {
    "1.0": "The first version.",
    "1.1": "An optional bbox on heading, paragraph, list item, header and footer nodes, and on TOC entries.",
    "1.2": "An optional origin on every page: where its text came from (text layer, OCR engine, vision "
    "model, parsed text); an optional source_file on the document: the file it was built from.",
    "1.3": "An image node's picture may be a JPEG, images/<node-id>.jpg: the bytes a PDF embeds, kept as "
    "they are.",
}

_VERSION = re.compile(r"^(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$")


def _parse(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, str):
        return None
    match = _VERSION.match(value)
    return (int(match.group(1)), int(match.group(2))) if match else None


_CURRENT: tuple[int, int] = (int(FORMAT_VERSION.split(".")[0]), int(FORMAT_VERSION.split(".")[1]))


def readable_versions() -> str:
    """The versions this release reads, for messages: ``"'1.0' to '1.2', and later 1.x versions"``."""
    return f"'{_CURRENT[0]}.0' to {FORMAT_VERSION!r}, and later {_CURRENT[0]}.x versions"


def format_problem(value: Any) -> str | None:
    """Why a document of ``format_version`` ``value`` cannot be read, or ``None`` when it can."""
    version = _parse(value)
    if version is None:
        return f"format_version {value!r} is not a version of the form 'MAJOR.MINOR'"
    if version[0] != _CURRENT[0]:
        return f"format_version {value!r} is not supported (this version reads {readable_versions()})"
    return None


def is_newer_minor(value: Any) -> bool:
    """Whether ``value`` is a later minor version of the current major one (fields may be unknown here)."""
    version = _parse(value)
    return version is not None and version[0] == _CURRENT[0] and version > _CURRENT


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A document's fields (as read from JSON) at the current version.

    Minor versions only add optional fields, so a 1.x document is relabelled with the current version,
    which is what it holds once validated (fields of a newer minor version that this release does not know
    are dropped by validation); a document older than 1.2 also gets each page's origin where it can be
    told for sure (see ``_origins_before_1_2``).

    Raises:
        ValueError: the version is not one this release reads (see :func:`format_problem`).
    """
    if "format_version" not in data:
        return data
    problem = format_problem(data["format_version"])
    if problem is not None:
        raise ValueError(problem)
    version = _parse(data["format_version"])
    # Steps from one minor version to the next, oldest first; 1.0 -> 1.1 has none.
    if version is not None and version < (1, 2):
        data = _origins_before_1_2(data)
    return {**data, "format_version": FORMAT_VERSION}


def _origins_before_1_2(data: dict[str, Any]) -> dict[str, Any]:
    """Pages of an index older than 1.2 get the origin that can be told for sure: a Markdown or text
    source was parsed; a PDF built without a single model call was read from its text layer (releases
    before 1.2 had no OCR). Any other page's origin stays unknown (``None``)."""
    extension = str(data.get("extension") or "").lower()
    usage = data.get("usage")
    calls = usage.get("calls", 0) if isinstance(usage, dict) else 0
    if extension in ("md", "markdown", "txt", "text"):
        origin: dict[str, Any] | None = {"source": "parsed"}
    elif extension == "pdf" and not calls:
        origin = {"source": "text_layer"}
    else:
        return data
    pages = data.get("pages")
    if not isinstance(pages, list):
        return data
    upgraded = [
        {**page, "origin": origin} if isinstance(page, dict) and "origin" not in page else page
        for page in pages
    ]
    return {**data, "pages": upgraded}

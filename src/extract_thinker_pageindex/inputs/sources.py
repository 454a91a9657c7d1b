"""Sources: decide what kind of document a path, string or byte buffer is, and read it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any, Literal

from ..errors import DocumentLoadError, EmptyDocumentError, UnsupportedFormatError
from .files import MAX_DOCUMENT_BYTES, clean_text, read_regular_file

__all__ = ["SourceInput", "SourceKind", "check_source_file", "decode_text", "resolve_source"]

SourceKind = Literal["markdown", "text", "pdf", "image"]
SourceInput = str | os.PathLike[str] | bytes | BytesIO

EXTENSION_KINDS: dict[str, SourceKind] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".pdf": "pdf",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".gif": "image",
    ".bmp": "image",
    ".webp": "image",
    ".tif": "image",
    ".tiff": "image",
}

CONTENT_TYPE_KINDS: dict[str, SourceKind] = {
    "markdown": "markdown",
    "md": "markdown",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text": "text",
    "txt": "text",
    "text/plain": "text",
    "pdf": "pdf",
    "application/pdf": "pdf",
    "image": "image",
    "image/png": "image",
    "image/jpeg": "image",
    "image/gif": "image",
    "image/bmp": "image",
    "image/webp": "image",
    "image/tiff": "image",
}


@dataclass(frozen=True)
class Source:
    """A resolved source: its kind, a display name, its extension and its bytes."""

    kind: SourceKind
    name: str
    extension: str | None
    data: bytes
    path: Path | None = None


def _kind_from_content_type(content_type: str) -> SourceKind:
    kind = CONTENT_TYPE_KINDS.get(content_type.strip().lower())
    if kind is None:
        known = ", ".join(sorted(CONTENT_TYPE_KINDS))
        raise UnsupportedFormatError(f"Content type {content_type!r} is not supported; use one of: {known}.")
    return kind


def _kind_from_path(path: Path) -> SourceKind:
    kind = EXTENSION_KINDS.get(path.suffix.lower())
    if kind is None:
        known = " ".join(sorted(EXTENSION_KINDS))
        raise UnsupportedFormatError(
            f"Cannot index {path.name!r}: the extension {path.suffix or '(none)'!r} is not supported "
            f"(supported: {known}); pass content_type= to say what the file holds."
        )
    return kind


def resolve_source(source: SourceInput, content_type: str | None = None, name: str | None = None) -> Source:
    """Work out what a source is and read its bytes.

    A ``pathlib.Path`` is always a file. A ``str`` is a file path unless ``content_type`` is given and nothing
    exists at that path, in which case the string is the document itself. ``bytes`` and ``BytesIO`` are the
    document's bytes and need ``content_type``.

    Raises:
        UnsupportedFormatError: the kind cannot be told or is not supported.
        DocumentLoadError: the file does not exist, is not a regular file (a directory, FIFO or device),
            is larger than ``MAX_DOCUMENT_BYTES`` or cannot be read.
    """
    if isinstance(source, (bytes, bytearray, BytesIO)):
        if content_type is None:
            raise UnsupportedFormatError(
                "Pass content_type= (for example 'pdf' or 'markdown') with in-memory bytes."
            )
        data = bytes(source.getvalue() if isinstance(source, BytesIO) else source)
        return Source(_kind_from_content_type(content_type), name or "document", None, data)

    if isinstance(source, str) and content_type is not None and not os.path.lexists(source):
        kind = _kind_from_content_type(content_type)
        return Source(kind, name or "document", None, clean_text(source).encode("utf-8"))

    if not isinstance(source, (str, os.PathLike)):
        raise UnsupportedFormatError(
            f"A source is a path, a string with content_type=, bytes or BytesIO; got {type(source).__name__}."
        )
    path = Path(source)
    kind = _kind_from_content_type(content_type) if content_type is not None else _kind_from_path(path)
    data = read_regular_file(path, limit=MAX_DOCUMENT_BYTES, error=DocumentLoadError)
    # A file name that is not UTF-8 reaches Python with lone surrogates; names are text from here on.
    extension = clean_text(path.suffix.lower().lstrip(".")) or None
    return Source(kind, clean_text(name or path.stem), extension, data, path)


def decode_text(source: Source) -> str:
    """Decode a text source as UTF-8 (a byte-order mark is dropped), with newlines normalised to ``\\n``.

    Raises:
        DocumentLoadError: the bytes are binary or not UTF-8.
        EmptyDocumentError: there is no text besides white space.
    """
    if b"\x00" in source.data:
        raise DocumentLoadError(
            f"{source.name!r} looks binary (it contains NUL bytes), not {source.kind} text."
        )
    try:
        text = source.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentLoadError(
            f"{source.name!r} is not valid UTF-8 (byte {exc.start}); convert it to UTF-8 first."
        ) from exc
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise EmptyDocumentError(f"{source.name!r} is empty: there is no text to index.")
    return text


# A URL ("https://...", "s3://..."): not a local path, so whether it exists is not ours to judge.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def check_source_file(source: Any, supported_formats: Iterable[str]) -> Any:
    """Check, for a loader's ``can_handle``, that a path with a supported extension names a file.

    ExtractThinker's ``Extractor`` picks a loader by calling ``can_handle``; a loader that just answers
    ``False`` for a missing file leaves the user with "No suitable document loader found". The three
    loaders of this package call this first, so a mistyped path is named instead.

    Args:
        source: What ``can_handle`` was given.
        supported_formats: The loader's extensions, without dots (``SUPPORTED_FORMATS``).

    Returns:
        The source, a path-like one as its ``str`` path (ExtractThinker's checks only read strings).

    Raises:
        DocumentLoadError: ``source`` is a path (not a URL) with one of ``supported_formats`` as its
            extension, and no such file exists (or it is a folder).
    """
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str) or _URL.match(source):
        return source
    extension = os.path.splitext(source)[1].lstrip(".").lower()
    if extension and extension in {str(name).lstrip(".").lower() for name in supported_formats}:
        if os.path.isdir(source):
            raise DocumentLoadError(f"{source!r} is a folder, not a document.")
        if not os.path.exists(source):
            raise DocumentLoadError(f"No such file: {source!r}.")
    return source

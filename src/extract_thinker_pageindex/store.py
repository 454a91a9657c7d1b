"""The ``<name>.pageindex/`` directory: ``document.json`` plus ``images/<node-id>.png``, saved atomically.

A save writes a complete new directory beside the target and swaps it in with one rename, so a reader
(or a crash) sees the previous index or the new one, never a mix. On Linux the swap is a single
``renameat2(RENAME_EXCHANGE)``; elsewhere the old directory is moved aside for the instant of the rename.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .errors import IndexFormatError, InvalidOptionError, OutputExistsError
from .model import FORMAT_VERSION, Document, ImageNode, Page, TableNode

__all__ = ["DOCUMENT_FILE", "IMAGES_DIR", "default_output_path", "index_document", "load_index", "save_index"]

DOCUMENT_FILE = "document.json"
IMAGES_DIR = "images"
SUFFIX = ".pageindex"


def default_output_path(source_path: str | os.PathLike[str]) -> Path:
    """``<dir>/<stem>.pageindex`` beside the source file."""
    path = Path(source_path)
    return path.with_name(path.stem + SUFFIX)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories with renameat2(RENAME_EXCHANGE); False where that is unavailable."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return result == 0


def _is_page_index_dir(path: Path) -> bool:
    return (
        path.is_dir()
        and not path.is_symlink()
        and ((path / DOCUMENT_FILE).is_file() or not any(path.iterdir()))
    )


STALE_SECONDS = 3600


def _remove_stale_staging(target: Path) -> None:
    """Remove staging folders that a crashed save left beside ``target`` (old enough to be nobody's)."""
    cutoff = time.time() - STALE_SECONDS
    for pattern in (f".{target.name}.tmp-*", f".{target.name}.old-*"):
        for leftover in target.parent.glob(pattern):
            try:
                if leftover.is_dir() and not leftover.is_symlink() and leftover.stat().st_mtime < cutoff:
                    shutil.rmtree(leftover, ignore_errors=True)
            except OSError:
                continue


def save_index(document: Document, output: str | os.PathLike[str]) -> Path:
    """Write a document to a ``.pageindex`` directory, replacing an existing index atomically.

    Image and table nodes that carry ``image_data`` are written to ``images/<node-id>.png`` and get
    ``image_path`` set in the saved JSON.

    Args:
        document: The document to save.
        output: The directory to write (conventionally ``<name>.pageindex``).

    Returns:
        The output path.

    Raises:
        OutputExistsError: ``output`` exists and is not a page index directory (it is never replaced).
        OSError: the directory cannot be written.

    A crash mid-save can leave a ``.<name>.pageindex.tmp-*`` folder beside the target; the next save removes
    such folders once they are an hour old.
    """
    target = Path(output)
    if target.exists() and not _is_page_index_dir(target):
        raise OutputExistsError(
            f"{str(target)!r} exists and is not a page index directory; choose another output path."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(target)
    staging = target.with_name(f".{target.name}.tmp-{uuid.uuid4().hex[:12]}")
    staging.mkdir()
    try:
        pages = []
        for page in document.pages:
            nodes = []
            for node in page.nodes:
                if isinstance(node, (ImageNode, TableNode)) and node.image_data:
                    relative = f"{IMAGES_DIR}/{node.id}.png"
                    (staging / IMAGES_DIR).mkdir(exist_ok=True)
                    _write_file(staging / relative, node.image_data)
                    node = node.model_copy(update={"image_path": relative})
                elif isinstance(node, (ImageNode, TableNode)) and node.image_path is not None:
                    node = node.model_copy(update={"image_path": None})
                nodes.append(node)
            pages.append(Page(index=page.index, nodes=nodes))
        saved = document.model_copy(update={"pages": pages})
        _write_file(staging / DOCUMENT_FILE, saved.model_dump_json(indent=2).encode("utf-8"))
        if (staging / IMAGES_DIR).exists():
            _fsync_dir(staging / IMAGES_DIR)
        _fsync_dir(staging)

        if not target.exists():
            os.rename(staging, target)
        elif _exchange(staging, target):
            shutil.rmtree(staging, ignore_errors=True)  # staging now holds the old index
        else:
            aside = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:12]}")
            os.rename(target, aside)
            os.rename(staging, target)
            shutil.rmtree(aside, ignore_errors=True)
        _fsync_dir(target.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _format_validation_error(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(item) for item in error["loc"]) or "document"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _read_image(root: Path, relative: str, node_id: str) -> bytes:
    if not isinstance(relative, str) or not relative or os.path.isabs(relative) or "\\" in relative:
        raise IndexFormatError(
            f"Node {node_id!r} has image path {relative!r}; it must be relative to the index."
        )
    parts = Path(relative).parts
    if ".." in parts:
        raise IndexFormatError(
            f"Node {node_id!r} has image path {relative!r}, which leaves the index directory."
        )
    if len(parts) != 2 or parts[0] != IMAGES_DIR:
        raise IndexFormatError(f"Node {node_id!r} has image path {relative!r}; images live in {IMAGES_DIR}/.")
    candidate = root / relative
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise IndexFormatError(
                f"Node {node_id!r} has image path {relative!r} through a symbolic link; refused."
            )
    if not str(candidate.resolve()).startswith(str(root.resolve()) + os.sep):
        raise IndexFormatError(
            f"Node {node_id!r} has image path {relative!r}, which leaves the index directory."
        )
    try:
        return candidate.read_bytes()
    except FileNotFoundError as exc:
        raise IndexFormatError(f"Node {node_id!r} names image {relative!r}, which is missing.") from exc
    except OSError as exc:
        raise IndexFormatError(f"Cannot read image {relative!r} of node {node_id!r}: {exc}.") from exc


def load_index(path: str | os.PathLike[str]) -> Document:
    """Load a saved page index, validate it and restore its image bytes.

    Args:
        path: The ``.pageindex`` directory or its ``document.json``.

    Returns:
        The document, with ``image_data`` filled from ``images/``.

    Raises:
        IndexFormatError: no index there, broken JSON, an unknown ``format_version``, invalid fields or
            references, or image paths that are missing, absolute, symbolic links or leave the directory.
    """
    given = Path(path)
    root = given.parent if given.name == DOCUMENT_FILE else given
    document_file = root / DOCUMENT_FILE
    try:
        raw = document_file.read_bytes()
    except FileNotFoundError as exc:
        raise IndexFormatError(f"No page index at {str(root)!r}: {DOCUMENT_FILE} is missing.") from exc
    except OSError as exc:
        raise IndexFormatError(f"Cannot read {str(document_file)!r}: {exc}.") from exc
    try:
        data: Any = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexFormatError(f"{str(document_file)!r} is not valid JSON: {exc}.") from exc
    if not isinstance(data, dict):
        raise IndexFormatError(f"{str(document_file)!r} must hold a JSON object, not {type(data).__name__}.")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexFormatError(
            f"{str(document_file)!r} has format_version {version!r}; this version of "
            "extract-thinker-pageindex "
            f"reads {FORMAT_VERSION!r}. Rebuild the index with index_document()."
        )
    try:
        document = Document.model_validate(data)
    except ValidationError as exc:
        raise IndexFormatError(
            f"{str(document_file)!r} is not a valid page index: {_format_validation_error(exc)}"
        ) from exc

    for page in document.pages:
        for node in page.nodes:
            if isinstance(node, (ImageNode, TableNode)):
                node.image_data = (
                    None if node.image_path is None else _read_image(root, node.image_path, node.id)
                )
    return document


def index_document(
    path: str | os.PathLike[str], output: str | os.PathLike[str] | None = None, **options: Any
) -> tuple[Document, Path]:
    """Build the page index of a file and save it as ``<name>.pageindex/``.

    Args:
        path: The source file.
        output: Where to write the index directory; defaults to ``<stem>.pageindex`` beside the source.
        **options: Passed to :func:`build_index` (``strategy``, ``pages``, ``model``, ...).

    Returns:
        The document and the path of the written directory.

    Raises:
        Whatever :func:`build_index` and :func:`save_index` raise. An existing index is left as it was
        unless the new one was written completely.
    """
    from .build import build_index

    if output is None and not os.path.isfile(path) and options.get("content_type") is not None:
        raise InvalidOptionError("index_document() needs output= when the source is a string, not a file.")
    document = build_index(path, **options)
    target = Path(output) if output is not None else default_output_path(path)
    save_index(document, target)
    return document, target

"""The ``<name>.pageindex/`` directory: ``document.json`` plus ``images/<node-id>.png`` (or ``.jpg``), saved
atomically.

A save writes a complete new directory beside the target and swaps it in with one rename, so a reader
(or a crash) sees the previous index or the new one, never a mix. On Linux the swap is a single
``renameat2(RENAME_EXCHANGE)``; elsewhere the old directory is moved aside for the instant of the rename.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json

from ..errors import IndexFormatError, InvalidOptionError, OutputExistsError, OutputWriteError, PageIndexError
from ..inputs.files import MAX_INDEX_FILE_BYTES, check_path, read_regular_file, write_failure
from .format_version import FORMAT_VERSION, format_problem, is_newer_minor, readable_versions, upgrade
from .model import Document, ImageNode, Page, TableNode

__all__ = [
    "DOCUMENT_FILE",
    "IMAGES_DIR",
    "IMAGE_SUFFIXES",
    "check_replaceable",
    "default_output_path",
    "image_suffix",
    "load_index",
    "save_index",
]

DOCUMENT_FILE = "document.json"
IMAGES_DIR = "images"
#: The kinds of picture files a save writes: JPEG as a PDF embeds it (format 1.3), PNG for the rest.
IMAGE_SUFFIXES = (".png", ".jpg")
SUFFIX = ".pageindex"


def image_suffix(data: bytes) -> str:
    """The file suffix of a node's picture bytes: ``".jpg"`` for JPEG, ``".png"`` for everything else."""
    return ".jpg" if data[:3] == b"\xff\xd8\xff" else ".png"


def default_output_path(source_path: str | os.PathLike[str]) -> Path:
    """``<dir>/<stem>.pageindex`` beside the source file."""
    path = Path(source_path)
    return path.with_name(path.stem + SUFFIX)


def _parse_json(raw: bytes) -> Any:
    """The JSON value of a saved ``document.json``, parsed into as little memory as the file allows.

    pydantic-core's parser reads the bytes as they are (``json.loads`` first decodes them into a string
    as large as the file) and builds each repeated short string (node types, levels, parent ids) once
    rather than once per node, which the document's models then share. It refuses some JSON
    that ``json.loads`` reads (escapes of lone UTF-16 surrogates, which the document model turns into
    U+FFFD; nesting past 200 levels, which no page index has); that JSON is left to ``json.loads``, whose
    errors (``ValueError``, ``RecursionError``) are then the ones raised.
    """
    try:
        return from_json(raw, cache_strings=True)
    except ValueError:
        return json.loads(raw)


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


def _replaceable(target: Path, found: dict[str, Any] | None = None) -> str | None:
    """Why an existing ``target`` must not be replaced by a save, or None when it may be (then ``found``,
    when given, receives the existing index's ``document.json`` fields, for :func:`_source_of`).

    Only what a save itself writes is ever replaced: an empty directory, or a directory whose name ends
    in ``.pageindex`` and which holds ``document.json`` (a JSON object with a ``format_version``, of any
    version, so an index written by an older release is replaced) and at most an ``images/`` folder of
    ``.png`` and ``.jpg`` files. A folder with anything else in it (a project folder that happens to hold a
    ``document.json``, notes a user put beside an index) is refused: replacing it would delete files this
    library did not write.
    """
    if target.is_symlink() or not target.is_dir():
        return "it is not a directory"
    entries = {entry.name: entry for entry in target.iterdir()}
    if not entries:
        return None
    if target.suffix != SUFFIX:
        return f"it is not empty and its name does not end in {SUFFIX!r}"
    others = sorted(set(entries) - {DOCUMENT_FILE, IMAGES_DIR})
    if others:
        return f"it holds files a page index does not ({', '.join(map(repr, others[:3]))})"
    images = entries.get(IMAGES_DIR)
    if images is not None:
        if images.is_symlink() or not images.is_dir():
            return f"its {IMAGES_DIR!r} is not a directory"
        if any(image.suffix not in IMAGE_SUFFIXES or not image.is_file() for image in images.iterdir()):
            return f"its {IMAGES_DIR!r} folder holds files that are not page images"
    try:
        data = _parse_json(
            read_regular_file(
                target / DOCUMENT_FILE,
                limit=MAX_INDEX_FILE_BYTES,
                error=IndexFormatError,
                follow_symlinks=False,
                single_link=True,
            )
        )
    except (IndexFormatError, ValueError, RecursionError):
        return f"its {DOCUMENT_FILE} is not a page index"
    if not isinstance(data, dict) or "format_version" not in data or not isinstance(data.get("pages"), list):
        return f"its {DOCUMENT_FILE} is not a page index"
    if found is not None:
        found.update(data)
    return None


def _source_of(fields: dict[str, Any]) -> str | None:
    """The file an index was built from, as its ``document.json`` says: ``source_file`` (format 1.2), or
    for an older index its name and extension (``report`` + ``pdf``); None when it cannot tell."""
    source = fields.get("source_file")
    if isinstance(source, str):
        return source
    name, extension = fields.get("name"), fields.get("extension")
    if isinstance(name, str) and isinstance(extension, str) and extension:
        return f"{name}.{extension}"
    return None


def _read_only_part(target: Path) -> Path | None:
    """The folder of an existing index (``target`` or its ``images/``) that this process may not write.

    Replacing such an index would rename it away and then fail to delete its files, leaving them in a
    staging folder: a user who made an index read-only is asked to make it writable instead.
    """
    for folder in (target, target / IMAGES_DIR):
        if folder.is_dir() and not folder.is_symlink() and not os.access(folder, os.W_OK | os.X_OK):
            return folder
    return None


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


def check_replaceable(target: Path, document: Document | None = None) -> None:
    """Refuse to replace ``target`` unless it is a page index (or an empty folder) and, with ``document``,
    unless that index was built from the same file as ``document`` (or one cannot tell).

    Raises:
        OutputExistsError: ``target`` is something else, or the index of another file.
    """
    if not os.path.lexists(target):
        return
    existing: dict[str, Any] = {}
    reason = _replaceable(target, existing)
    if reason is not None:
        raise OutputExistsError(
            f"{str(target)!r} exists and is not a page index directory ({reason}), so it is not "
            "replaced; choose another output path."
        )
    if document is None or document.source_file is None:
        return
    theirs = _source_of(existing)
    if theirs is not None and theirs != document.source_file:
        raise OutputExistsError(
            f"{str(target)!r} holds the page index of {theirs!r}, not of {document.source_file!r}, so it is "
            "not replaced. Choose another output (output= in Python, -o on the command line), or replace "
            "it: overwrite=True (--force)."
        )


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return those it created, deepest first.

    Raises:
        OSError: a folder cannot be created (those made before it are removed again).
    """
    missing = []
    current = folder
    while not os.path.lexists(current) and current.parent != current:
        missing.append(current)
        current = current.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        _remove_folders(missing)
        raise
    return missing


def _remove_folders(created: list[Path]) -> None:
    for folder in created:  # deepest first, and only while empty
        try:
            folder.rmdir()
        except OSError:
            break


def _swap_in(staging: Path, target: Path) -> None:
    """Put the complete ``staging`` directory in place of ``target``, atomically.

    Two saves of the same new output may race (two processes, two loaders sharing a cache): the first
    rename wins the empty name, and the second finds it taken and swaps with it, so the last save wins
    cleanly and each reader sees one whole index.
    """
    for _ in range(8):
        try:
            os.rename(staging, target)
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
        # Another save put an index there since the check: it is replaced like any earlier index.
        check_replaceable(target)
        if _exchange(staging, target):
            shutil.rmtree(staging, ignore_errors=True)  # staging now holds the other index
            return
        aside = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:12]}")
        try:
            os.rename(target, aside)
        except FileNotFoundError:
            continue  # the other save moved it aside itself; the name is free again
        try:
            os.rename(staging, target)
        finally:
            shutil.rmtree(aside, ignore_errors=True)
        return
    raise OSError(errno.EBUSY, f"{str(target)!r} kept changing while it was replaced")


def save_index(document: Document, output: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write a document to a ``.pageindex`` directory, replacing an existing index atomically.

    Image and table nodes that carry ``image_data`` are written to ``images/<node-id>.png`` (``.jpg`` for
    JPEG bytes) and get ``image_path`` set in the saved JSON.

    Args:
        document: The document to save.
        output: The directory to write (conventionally ``<name>.pageindex``).
        overwrite: Replace an index built from another file (``report.md`` saved where the index of
            ``report.pdf`` is). An index of the same file is always replaced.

    Returns:
        The output path.

    Raises:
        OutputExistsError: ``output`` exists and is not recognisably a page index: only an empty
            directory, or a ``*.pageindex`` directory holding nothing but ``document.json`` and
            ``images/*.png`` and ``*.jpg``, is replaced. Nothing else is ever deleted. Also when ``output``
            holds the index of another source file, without ``overwrite=True``.
        OutputWriteError: the index cannot be written (a read-only folder, index or file system, a full
            disk; ``errno`` is the system's, the ``OSError`` its ``__cause__``): an index already there
            is left as it was, and no staging or new folder is left behind.

    A crash mid-save can leave a ``.<name>.pageindex.tmp-*`` folder beside the target; the next save removes
    such folders once they are an hour old.
    """
    check_path(output, error=InvalidOptionError)
    target = Path(output)
    try:
        _save(document, target, overwrite=overwrite)
    except PageIndexError:
        raise
    except OSError as exc:
        raise write_failure(f"The page index {str(target)!r}", target, exc) from exc
    return target


def _save(document: Document, target: Path, *, overwrite: bool) -> None:
    """``save_index`` without the translation of the operating system's errors."""
    check_replaceable(target, None if overwrite else document)
    try:
        created = _make_parents(target.parent)
    except (FileExistsError, NotADirectoryError) as exc:
        raise OutputExistsError(
            f"{str(target)!r} cannot be written: a part of its folder {str(target.parent)!r} is a file, "
            "not a folder; choose another output path."
        ) from exc
    try:
        _remove_stale_staging(target)
        staging = target.with_name(f".{target.name}.tmp-{uuid.uuid4().hex[:12]}")
        staging.mkdir()
    except BaseException:
        _remove_folders(created)
        raise
    try:
        # Checked once the folder has taken the staging folder, so that a read-only folder is reported
        # as such, not the index in it that cannot be written either.
        read_only = _read_only_part(target)
        if read_only is not None:
            failure = OutputWriteError(
                f"The page index {str(target)!r} cannot be replaced: the folder {str(read_only)!r} is "
                "read-only; nothing was changed. Make it writable, or choose another output path (-o on "
                "the command line, output= in Python)."
            )
            failure.errno = errno.EACCES
            raise failure
        pages = []
        for page in document.pages:
            nodes = []
            for node in page.nodes:
                if isinstance(node, (ImageNode, TableNode)) and node.image_data:
                    relative = f"{IMAGES_DIR}/{node.id}{image_suffix(node.image_data)}"
                    (staging / IMAGES_DIR).mkdir(exist_ok=True)
                    _write_file(staging / relative, node.image_data)
                    node = node.model_copy(update={"image_path": relative})
                elif isinstance(node, (ImageNode, TableNode)) and node.image_path is not None:
                    node = node.model_copy(update={"image_path": None})
                nodes.append(node)
            pages.append(Page(index=page.index, nodes=nodes, origin=page.origin))
        saved = document.model_copy(update={"pages": pages})
        # The serializer's bytes as they are (model_dump_json would decode them into a string, which
        # would then be encoded again): one copy of the JSON in memory, not three.
        _write_file(staging / DOCUMENT_FILE, Document.__pydantic_serializer__.to_json(saved, indent=2))
        if (staging / IMAGES_DIR).exists():
            _fsync_dir(staging / IMAGES_DIR)
        _fsync_dir(staging)
        _swap_in(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_folders(created)
        raise
    _fsync_dir(target.parent)


def _format_validation_error(exc: ValidationError, *, within: tuple[str | int, ...] = ()) -> str:
    """The first three problems of a validation, each with where it is (``pages.3.nodes.1.bbox``)."""
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(item) for item in (*within, *error["loc"])) or "document"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _parse_document(raw: bytes, document_file: Path) -> dict[str, Any]:
    """The JSON object of a ``document.json``, or ``IndexFormatError`` saying why it is none."""
    try:
        data = _parse_json(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexFormatError(f"{str(document_file)!r} is not valid JSON: {exc}.") from exc
    except RecursionError as exc:
        raise IndexFormatError(
            f"{str(document_file)!r} is not a page index: it is nested too deeply."
        ) from exc
    except ValueError as exc:  # Python refuses integers of thousands of digits
        raise IndexFormatError(f"{str(document_file)!r} is not a page index: {exc}.") from exc
    if not isinstance(data, dict):
        raise IndexFormatError(f"{str(document_file)!r} must hold a JSON object, not {type(data).__name__}.")
    return data


def _validate_document(data: dict[str, Any], document_file: Path) -> Document:
    """The document a parsed ``document.json`` holds, validated, or ``IndexFormatError``.

    Each page is validated on its own and its parsed JSON replaced at once by the page's model, so the
    parsed document and the model are never both whole in memory (together they would take about twice
    what the model alone takes).
    """
    version = data.get("format_version")
    if format_problem(version) is not None:
        raise IndexFormatError(
            f"{str(document_file)!r} has format_version {version!r}; this version of "
            f"extract-thinker-pageindex reads {readable_versions()}. Rebuild the index with "
            "index_document(), or read it with the release that wrote it."
        )
    data = upgrade(data)  # before any page is validated, so pages are read at the current version
    pages = data.get("pages")
    position: int | None = None
    try:
        if isinstance(pages, list):
            for position, page in enumerate(pages):
                pages[position] = Page.model_validate(page)
        position = None
        return Document.model_validate(data)
    except ValidationError as exc:
        problems = _format_validation_error(exc, within=() if position is None else ("pages", position))
        if is_newer_minor(version):
            raise IndexFormatError(
                f"{str(document_file)!r} has format_version {version!r}, written by a later release "
                f"(this one writes {FORMAT_VERSION!r}), and uses what this release cannot read: "
                f"{problems}. Upgrade extract-thinker-pageindex, or rebuild the index."
            ) from exc
        raise IndexFormatError(f"{str(document_file)!r} is not a valid page index: {problems}") from exc
    except RecursionError as exc:
        raise IndexFormatError(
            f"{str(document_file)!r} is not a page index: it is nested too deeply."
        ) from exc


# What a save writes for an image: images/<node id>.png or .jpg, with node ids as the model admits them.
_IMAGE_PATH = re.compile(rf"^{IMAGES_DIR}/[A-Za-z0-9][A-Za-z0-9._-]{{0,127}}\.(?:png|jpg)$")


def _read_image(root: Path, relative: str, node_id: str, *, later: Any = None) -> bytes:
    """The bytes of a node's picture file; ``later`` is the format version of an index a later release
    wrote (a picture file of a kind this release does not know is then said to be that release's)."""
    shown = repr(relative[:100] + ("..." if len(relative) > 100 else ""))
    if relative.startswith(("/", "\\")) or os.path.isabs(relative):
        raise IndexFormatError(f"Node {node_id!r} has image path {shown}; it must be relative to the index.")
    if ".." in relative.replace("\\", "/").split("/"):
        raise IndexFormatError(f"Node {node_id!r} has image path {shown}, which leaves the index directory.")
    if not _IMAGE_PATH.match(relative):
        # Anything else (NUL bytes, lone surrogates, thousands of characters, other folders) is refused
        # before it reaches the file system.
        if later is not None:
            raise IndexFormatError(
                f"Node {node_id!r} has image path {shown}: the index has format_version {later!r}, written "
                f"by a later release (this one writes {FORMAT_VERSION!r}), and this release reads pictures "
                f"from {IMAGES_DIR}/<node id>.png or .jpg only. Upgrade extract-thinker-pageindex, or "
                "rebuild the index."
            )
        raise IndexFormatError(
            f"Node {node_id!r} has image path {shown}; images live in {IMAGES_DIR}/<node id>.png or .jpg."
        )
    if (root / IMAGES_DIR).is_symlink():
        raise IndexFormatError(f"Node {node_id!r} has image path {shown} through a symbolic link; refused.")
    image = root / relative
    if not os.path.lexists(image):
        raise IndexFormatError(f"Node {node_id!r} names image {shown}, which is missing.")
    try:
        # Opened without following a link, and a hard link (another name of a file that may live
        # anywhere on the system) is refused: nothing outside the index directory is read.
        return read_regular_file(
            image,
            limit=MAX_INDEX_FILE_BYTES,
            error=IndexFormatError,
            label=shown,
            follow_symlinks=False,
            single_link=True,
        )
    except IndexFormatError as exc:
        raise IndexFormatError(f"Cannot read image of node {node_id!r}: {exc}") from exc


def load_index(path: str | os.PathLike[str]) -> Document:
    """Load a saved page index, validate it and restore its image bytes.

    Args:
        path: The ``.pageindex`` directory or its ``document.json``.

    Returns:
        The document, with ``image_data`` filled from ``images/``.

    Any 1.x ``format_version`` is read: an index of an older version (1.0 has no text boxes) gets the
    fields it lacks at their defaults, and one of a later 1.x version loses the fields this release does
    not know. Either way the document returned is of the current version (``FORMAT_VERSION``).

    Raises:
        IndexFormatError: no index there, broken JSON, a ``format_version`` of another major version,
            invalid fields or references, or image paths that are missing, absolute, symbolic links or
            leave the directory.
    """
    check_path(path, error=IndexFormatError)
    given = Path(path)
    root = given.parent if given.name == DOCUMENT_FILE else given
    document_file = root / DOCUMENT_FILE
    if root.is_symlink() and not root.is_dir():
        raise IndexFormatError(f"No page index at {str(root)!r}: it is a broken or looping symbolic link.")
    try:
        raw = read_regular_file(
            document_file,
            limit=MAX_INDEX_FILE_BYTES,
            error=IndexFormatError,
            follow_symlinks=False,
            single_link=True,
        )
    except IndexFormatError as exc:
        if not os.path.lexists(document_file) and not root.is_dir():
            what = "it is a file" if root.is_file() else "there is no such directory"
            raise IndexFormatError(
                f"No page index at {str(root)!r}: {what}; a page index is a folder holding {DOCUMENT_FILE}."
            ) from exc
        if not os.path.lexists(document_file):
            raise IndexFormatError(f"No page index at {str(root)!r}: {DOCUMENT_FILE} is missing.") from exc
        raise
    data = _parse_document(raw, document_file)
    del raw  # the parsed document holds all of it; the file's bytes need not stay while it is validated
    version = data.get("format_version")
    later = version if is_newer_minor(version) else None
    document = _validate_document(data, document_file)
    for page in document.pages:
        for node in page.nodes:
            if isinstance(node, (ImageNode, TableNode)):
                node.image_data = (
                    None
                    if node.image_path is None
                    else _read_image(root, node.image_path, node.id, later=later)
                )
    return document

"""Reading files safely: regular files only, never more than a stated number of bytes.

Every file the library reads (a source document, a saved ``document.json``, an index's images, a batch's
manifest, the files a batch hashes) goes through :func:`iter_regular_file` (:func:`read_regular_file` and
:func:`hash_regular_file` are built on it). It opens the path without blocking (a FIFO named
``report.pdf`` would otherwise wait forever for a writer), checks on the open descriptor that it is a
regular file (not a FIFO, a socket or a device such as ``/dev/zero`` behind a symbolic link), and reads at
most ``limit`` bytes, so a file that is larger than it claims, or grows while it is read, cannot take the
process's memory.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator

from ..errors import OutputWriteError, PageIndexError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_INDEX_FILE_BYTES",
    "check_path",
    "clean_text",
    "hash_regular_file",
    "write_failure",
    "iter_regular_file",
    "read_regular_file",
]

#: The largest source document read (PDF, Markdown, text or image): 2 GiB.
MAX_DOCUMENT_BYTES = 2 << 30
#: The largest file read from a saved page index (``document.json`` or one image): 512 MiB.
MAX_INDEX_FILE_BYTES = 512 << 20

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def read_regular_file(
    path: str | os.PathLike[str],
    *,
    limit: int,
    error: type[PageIndexError],
    label: str | None = None,
    follow_symlinks: bool = True,
    single_link: bool = False,
) -> bytes:
    """The bytes of a regular file, refusing anything else before reading from it.

    Args:
        path: The file.
        limit: The most bytes read; a larger file is refused.
        error: The error class raised (``DocumentLoadError`` for sources, ``IndexFormatError`` for indexes).
        label: How messages name the file (its quoted path by default).
        follow_symlinks: When False, a symbolic link as the last component is refused.
        single_link: When True, a file with more than one hard link is refused: inside a page index, such a
            file may be another file of the system, linked in.

    Returns:
        The file's bytes.

    Raises:
        error: the path is missing, a directory, a FIFO, a device or socket, a symbolic link where none
            is allowed, a hard-linked file where that is refused, a loop of links, larger than ``limit``,
            or cannot be read.
    """
    chunks = list(
        iter_regular_file(
            path,
            limit=limit,
            error=error,
            label=label,
            follow_symlinks=follow_symlinks,
            single_link=single_link,
        )
    )
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def hash_regular_file(
    path: str | os.PathLike[str], *, limit: int, error: type[PageIndexError], label: str | None = None
) -> str:
    """The sha256 (hex) of a regular file, read in chunks through the same guard as
    :func:`read_regular_file` (a FIFO or a device is refused before a byte is read).

    Raises:
        error: as :func:`read_regular_file` raises it.
    """
    digest = hashlib.sha256()
    for chunk in iter_regular_file(path, limit=limit, error=error, label=label):
        digest.update(chunk)
    return digest.hexdigest()


def iter_regular_file(
    path: str | os.PathLike[str],
    *,
    limit: int,
    error: type[PageIndexError],
    label: str | None = None,
    follow_symlinks: bool = True,
    single_link: bool = False,
    chunk_size: int = 1 << 24,
) -> Iterator[bytes]:
    """The bytes of a regular file in chunks of at most ``chunk_size``: the one guarded path every read of
    a file goes through (the arguments and errors are :func:`read_regular_file`'s).

    The checks are made before the first chunk is given; the file is closed when the iteration ends or
    the iterator is dropped.
    """
    name = label or _quote(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        # Checked before opening (opening some devices has effects of its own), and again on the open
        # descriptor below, since the path may be swapped in between.
        before = os.stat(path, follow_symlinks=follow_symlinks)
        if not stat.S_ISREG(before.st_mode) and not stat.S_ISLNK(before.st_mode):
            raise error(f"{name} is {_kind(before.st_mode)}, not a regular file; refused.")
        fd = os.open(path, flags)
    except PageIndexError:
        raise
    except ValueError as exc:  # a NUL in the path
        raise error(f"{name} is not a usable path: {exc}.") from exc
    except UnicodeEncodeError as exc:
        raise error(f"{name} is not a usable path: it cannot be encoded for the file system.") from exc
    except OSError as exc:
        raise error(_open_failure(name, exc, follow_symlinks)) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{name} is {_kind(info.st_mode)}, not a regular file; refused.")
        if single_link and info.st_nlink > 1:
            raise error(
                f"{name} has {info.st_nlink} hard links, so it may be a file from outside; refused. "
                "Copy the index without hard links."
            )
        if info.st_size > limit:
            raise error(f"{name} is {info.st_size:,} bytes, over the limit of {limit:,}; refused.")
        remaining = limit + 1
        while remaining > 0:
            try:
                chunk = os.read(fd, min(remaining, chunk_size))
            except OSError as exc:
                raise error(f"Cannot read {name}: {exc.strerror or exc}.") from exc
            if not chunk:
                break
            remaining -= len(chunk)
            if remaining <= 0:
                raise error(f"{name} grew past the limit of {limit:,} bytes while it was read; refused.")
            yield chunk
    except OSError as exc:
        raise error(f"Cannot read {name}: {exc.strerror or exc}.") from exc
    finally:
        os.close(fd)


# Linux's limits on a whole path and on one name in it, in bytes.
_PATH_MAX = 4096
_NAME_MAX = 255


def check_path(path: str | os.PathLike[str], *, error: type[PageIndexError]) -> None:
    """Refuse a path the file system cannot take (a NUL, a lone surrogate, a name or path too long)
    before any ``Path`` method trips over it with a raw ``ValueError`` or ``OSError``.

    Raises:
        error: the path cannot be used.
    """
    name = _quote(path)
    shown = name if len(name) <= 120 else name[:100] + "..."
    try:
        encoded = os.fsencode(path)
    except (UnicodeEncodeError, TypeError) as exc:
        raise error(f"{shown} is not a usable path: it cannot be encoded for the file system.") from exc
    if b"\0" in encoded:
        raise error(f"{shown} is not a usable path: it holds a NUL character.")
    if len(encoded) > _PATH_MAX or any(len(part) > _NAME_MAX for part in encoded.split(b"/")):
        raise error(f"{shown} is not a usable path: it is too long for the file system.")


# What a write the operating system refused says, by errno: the problem, and what to do about it.
_ELSEWHERE = "choose another output path (-o on the command line, output= in Python)"
_ONLY_ELSEWHERE = "Choose another output path (-o on the command line, output= in Python)."
_WRITE_FAILURES = {
    errno.EACCES: ("the folder {folder} is not writable", f"Make it writable, or {_ELSEWHERE}."),
    errno.EPERM: ("the folder {folder} is not writable", f"Make it writable, or {_ELSEWHERE}."),
    errno.EROFS: ("the folder {folder} is on a read-only file system", _ONLY_ELSEWHERE),
    errno.ENOSPC: ("the disk holding {folder} is full", f"Free some space, or {_ELSEWHERE}."),
    errno.EDQUOT: ("the disk quota for {folder} is used up", f"Free some space, or {_ELSEWHERE}."),
}


def write_failure(subject: str, target: str | os.PathLike[str], exc: OSError) -> OutputWriteError:
    """The project's error for a write the operating system refused (a read-only folder, a full disk),
    with the system's ``errno``: "<subject> cannot be written: <the problem> (<strerror>); nothing was
    replaced. <what to do>". Raise it ``from exc``.

    Args:
        subject: What was being written, as the message starts ("The page index '/x/a.pageindex'").
        target: Its path; the message names the nearest folder of it that exists.
        exc: The operating system's error.
    """
    folder = os.path.dirname(os.path.abspath(target))
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)  # the folder that exists: the one that refused what was made in it
    problem, remedy = _WRITE_FAILURES.get(exc.errno or 0, ("writing in {folder} failed", _ONLY_ELSEWHERE))
    error = OutputWriteError(
        f"{subject} cannot be written: {problem.format(folder=_quote(folder))} ({exc.strerror or exc}); "
        f"nothing was replaced. {remedy}"
    )
    error.errno = exc.errno  # only errno: with strerror set as well, str() would print that instead
    return error


def _open_failure(name: str, exc: OSError, follow_symlinks: bool) -> str:
    if exc.errno == errno.ENOENT:
        return f"No such file: {name}."
    if exc.errno == errno.EISDIR:
        return f"{name} is a directory, not a file."
    if exc.errno == errno.ELOOP:
        if not follow_symlinks:
            return f"{name} is a symbolic link; refused."
        return f"{name} is a loop of symbolic links."
    if exc.errno == errno.ENAMETOOLONG:
        return f"{name[:80]}... is a path too long for the file system."
    return f"Cannot read {name}: {exc.strerror or exc}."


def _quote(path: str | os.PathLike[str]) -> str:
    return repr(clean_text(os.fspath(path)))


def clean_text(text: str) -> str:
    """Text with lone UTF-16 surrogates replaced by U+FFFD, so that it can be encoded as UTF-8.

    Lone surrogates reach Python strings from non-UTF-8 file names (``os.listdir``), from PDF metadata
    and from JSON escapes; they cannot be written to JSON files, SQLite or a terminal. Surrogate pairs
    written as two characters are joined into the character they encode.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text

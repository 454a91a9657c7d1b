"""Writing a view without harming what is there: which existing files are the view's own, the staging
folder it is written in, the renames that publish it, and the removal of staging folders left by killed
views.

A view is recognised by marks it writes itself, never by file names: the HTML file by its generated
header (the first bytes of every view, :data:`VIEW_HEAD`), the pictures folder by a mark file,
``.pageindex-view``, that lists every file the view put in it. Only these are replaced; anything else at
the output's names (a user's report, a folder of their own, empty or not, a FIFO, a symbolic link) is
left alone and the write is refused with ``OutputExistsError``, before anything is written.

A view is written in a hidden staging folder beside its place, ``.<name>.view-tmp-<token>``, holding a
note of its writer (host, process id and start time). A killed view leaves that folder behind; the next
view of the same output removes it once its writer process is gone, or, when the writer cannot be asked
(another machine), once nothing in it changed for :data:`STALE_SECONDS`. ``document.store`` clears the
staging folders of saved indexes by age alone (an hour); a view can also ask whether its writer still
runs, so a killed view's folder goes at once and a slow live one is never taken.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import stat
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import InvalidOptionError, OutputExistsError, OutputWriteError
from ..inputs.files import check_path, iter_regular_file, read_regular_file, write_failure

__all__ = [
    "FOLDER_MARK",
    "GENERATOR_MARK",
    "STALE_SECONDS",
    "VIEW_HEAD",
    "Staging",
    "check_output",
    "images_folder",
    "staged_view",
]

#: The mark file in a pictures folder the view wrote: JSON naming the generator and every file written.
FOLDER_MARK = ".pageindex-view"
#: A staging folder whose writer cannot be asked is taken as abandoned once nothing in it changed for
#: this long (a live view writes a page picture every second or so).
STALE_SECONDS = 600

_GENERATOR = "extract-thinker-pageindex view"
_MARK_LIMIT = 4 << 20
_STAGING = ".view-tmp-"
_TOKEN = re.compile(r"[0-9a-f]{12}")
_WRITER = "writer.json"
_FILES = "files"
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)

#: The generator mark of a view, in :data:`VIEW_HEAD`.
GENERATOR_MARK = '<meta name="generator" content="extract-thinker-pageindex view">'
#: The first bytes of every view, up to its generator mark: only a file that starts with them is ever
#: written over (a page that merely quotes the mark, in its text or later in its head, is not a view).
VIEW_HEAD = f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{GENERATOR_MARK}'


def images_folder(output: str | os.PathLike[str]) -> Path:
    """Where the page images of a view written to ``output`` go: ``<output stem>_files`` beside it."""
    path = Path(output)
    return path.with_name(f"{path.stem}_files")


# -- what may be replaced ------------------------------------------------------------------------------


def check_output(target: Path, *, index_root: Path, source_path: Path | None) -> None:
    """Refuse an output the view must not write: an unusable path, a folder, a link, a FIFO or device,
    the indexed source, a place inside the index, a file that is not a view, or a pictures folder the
    view did not make. Nothing is opened that could block, and nothing is written.

    Raises:
        InvalidOptionError: the path (or its pictures folder's) cannot be used by the file system.
        OutputExistsError: any of the others.
    """
    check_path(target, error=InvalidOptionError)
    folder = images_folder(target)
    try:
        check_path(folder, error=InvalidOptionError)
    except InvalidOptionError as exc:
        raise InvalidOptionError(
            f"The pictures folder of {_shown(target)}, {_shown(folder.name)}, is too long a name for the "
            "file system; choose a shorter output name."
        ) from exc
    info = _lstat(target)
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise OutputExistsError(f"{_shown(target)} is a folder; name the HTML file to write instead.")
        if stat.S_ISLNK(info.st_mode):
            raise OutputExistsError(
                f"{_shown(target)} is a symbolic link, which the view does not replace; name the file it "
                "points to, or another output name."
            )
        if not stat.S_ISREG(info.st_mode):
            raise OutputExistsError(
                f"{_shown(target)} is {_kind(info.st_mode)}, not a file; name an HTML file to write."
            )
    try:
        resolved = target.resolve()
        index_folder = index_root.resolve()
        source = source_path.resolve() if source_path is not None else None
    except RuntimeError as exc:  # a loop of links in a folder of the path
        raise OutputExistsError(f"{_shown(target)} cannot be written: {exc}; choose another output.") from exc
    except OSError as exc:
        raise _write_failure(target, exc) from exc
    if source is not None and resolved == source:
        raise OutputExistsError(
            f"{_shown(target)} is the indexed source file; name another HTML file to write."
        )
    for path in (resolved, images_folder(resolved)):
        if path == index_folder or index_folder in path.parents:
            raise OutputExistsError(
                f"{_shown(target)} would be written inside the page index {_shown(index_root)}; "
                "name an HTML file outside it."
            )
    _check_replaceable(target, folder)


def _check_replaceable(target: Path, folder: Path) -> None:
    """Refuse an existing HTML file or pictures folder that is not the view's own (checked again just
    before the view is published, as something may have taken the names meanwhile)."""
    if _lstat(target) is not None and not _is_view(target):
        raise OutputExistsError(
            f"{_shown(target)} exists and is not a view written by this command (its head is not the view's "
            "generated header); move it away or choose another output name."
        )
    reason = _foreign_folder(folder)
    if reason is not None:
        raise OutputExistsError(
            f"{_shown(folder)} exists and is not a folder of page pictures written by view ({reason}); "
            "nothing was written: move it away or choose another output name."
        )


def _is_view(path: Path) -> bool:
    """Whether ``path`` is a regular file that opens with the view's generated header."""
    head = VIEW_HEAD.encode("utf-8")
    try:
        # Through the library's one guarded reader, so a FIFO or device is refused before it is opened
        # for reading; only the head is read.
        chunks = iter_regular_file(
            path,
            limit=sys.maxsize - 1,
            error=OutputExistsError,
            follow_symlinks=False,
            chunk_size=len(head),
        )
        try:
            first = next(chunks, b"")
        finally:
            close = getattr(chunks, "close", None)  # a generator: closes the file at once
            if close is not None:
                close()
    except OutputExistsError:
        return False
    return first == head


def _foreign_folder(folder: Path) -> str | None:
    """Why an existing ``folder`` is not a pictures folder the view wrote (None if it is one, or is
    missing): the view's mark must be in it, and every other entry a file the mark lists."""
    info = _lstat(folder)
    if info is None:
        return None
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    mark = folder / FOLDER_MARK
    if _lstat(mark) is None:
        return f"it has no {FOLDER_MARK} mark"
    try:
        data: Any = json.loads(
            read_regular_file(
                mark, limit=_MARK_LIMIT, error=OutputExistsError, follow_symlinks=False, single_link=True
            )
        )
    except (OutputExistsError, ValueError, RecursionError):
        return f"its {FOLDER_MARK} is not the view's mark"
    files = data.get("files") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("generator") != _GENERATOR
        or not isinstance(files, list)
        or not all(isinstance(name, str) for name in files)
    ):
        return f"its {FOLDER_MARK} is not the view's mark"
    listed = set(files)
    try:
        others = sorted(
            entry.name
            for entry in os.scandir(folder)
            if entry.name != FOLDER_MARK
            and (entry.name not in listed or not entry.is_file(follow_symlinks=False))
        )
    except OSError as exc:
        return f"it cannot be read: {exc.strerror or exc}"
    if others:
        return f"it holds files the view did not write: {', '.join(map(_shown, others[:3]))}"
    return None


# -- staging and publishing -----------------------------------------------------------------------------


@dataclass
class Staging:
    """A view being written: its hidden folder beside the output, where its pictures and HTML go first."""

    folder: Path
    target: Path
    #: Set once the view is in place.
    published: bool = False

    def add_picture(self, name: str, data: bytes) -> str:
        """Write a picture for the pictures folder; returns its URL relative to the HTML file."""
        files = self.folder / _FILES
        try:
            files.mkdir(exist_ok=True)
            (files / name).write_bytes(data)
        except OSError as exc:
            raise _write_failure(self.target, exc) from exc
        return f"{quote(images_folder(self.target).name)}/{quote(name)}"

    def publish(self, html: Iterable[str]) -> None:
        """Write the HTML, given in pieces (written one by one, never joined in memory), and move it (and
        its pictures folder, if any) into place: the folder first, so the page never
        names pictures that are not there yet; each by a rename, so a reader never sees half a file. An
        earlier view's folder is moved aside and only removed once the new view is in place: if a step
        fails, the earlier view is put back as it was."""
        target, folder = self.target, images_folder(self.target)
        page, files, old = self.folder / "view.html", self.folder / _FILES, self.folder / "old-files"
        try:
            with open(page, "w", encoding="utf-8") as file:
                file.writelines(html)
            if files.is_dir():
                names = sorted(entry.name for entry in os.scandir(files))
                mark = {"generator": _GENERATOR, "view": target.name, "files": names}
                (files / FOLDER_MARK).write_text(json.dumps(mark, indent=1), encoding="utf-8")
        except OSError as exc:
            raise _write_failure(target, exc) from exc
        _check_replaceable(target, folder)
        moved_old = moved_new = False
        try:
            if _lstat(folder) is not None:
                os.rename(folder, old)
                moved_old = True
            if files.is_dir():
                os.rename(files, folder)
                moved_new = True
            os.replace(page, target)
            self.published = True
        except BaseException as exc:
            if moved_new:
                with contextlib.suppress(OSError):
                    os.rename(folder, files)
            if moved_old:
                with contextlib.suppress(OSError):
                    os.rename(old, folder)
            if isinstance(exc, OSError):
                raise _write_failure(target, exc) from exc
            raise


@contextmanager
def staged_view(target: Path) -> Iterator[Staging]:
    """A staging folder for a view of ``target``, removed when the block ends (published or not).

    The output's missing folders are created first and removed again if the view is not published; the
    staging folders that killed views of the same output left are removed (see the module docstring).

    Raises:
        OutputExistsError: a part of the output's folder is a file.
        OutputWriteError: the folder cannot be written (read-only, a full disk).
    """
    created = _make_parents(target, target.parent)
    staging: Staging | None = None
    try:
        remove_stale_staging(target)
        folder = target.parent / f"{_staging_prefix(target)}{uuid.uuid4().hex[:12]}"
        try:
            folder.mkdir(mode=0o700)
        except OSError as exc:
            raise _write_failure(target, exc) from exc
        try:
            try:
                (folder / _WRITER).write_text(json.dumps(_writer()), encoding="utf-8")
            except OSError as exc:
                raise _write_failure(target, exc) from exc
            staging = Staging(folder, target)
            yield staging
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        if staging is None or not staging.published:
            _remove_created(created)


def _write_failure(target: Path, exc: OSError) -> OutputWriteError:
    return write_failure(f"The view {_shown(target)}", target, exc)


def _make_parents(target: Path, folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return those created, deepest first.

    Raises:
        OutputExistsError: a part of the path is a file, not a folder.
        OutputWriteError: a folder cannot be created.
    """
    missing = []
    current = folder
    while not current.is_dir():
        if os.path.lexists(current):
            raise OutputExistsError(f"{_shown(current)} is not a folder; the view cannot be written in it.")
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_created(missing)
        raise _write_failure(target, exc) from exc
    return missing


def _remove_created(created: list[Path]) -> None:
    for folder in created:  # deepest first; only if still empty
        try:
            folder.rmdir()
        except OSError:
            break


# -- staging folders of killed views --------------------------------------------------------------------


def _staging_prefix(target: Path) -> str:
    # The output's name, cut so that the staging folder's name stays within the 255 bytes of a name.
    return f".{target.name[:50]}{_STAGING}"


def remove_stale_staging(target: Path) -> list[Path]:
    """Remove the staging folders that killed views of ``target`` left beside it; returns those removed.

    Only a folder with the staging name of this output is considered (not a link), and only removed
    when its writer process is gone (same host: by process id and start time) or, when that cannot be
    told, when nothing in it changed for :data:`STALE_SECONDS`.
    """
    prefix = _staging_prefix(target)
    now = time.time()
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix) or not _TOKEN.fullmatch(entry.name[len(prefix) :]):
            continue
        folder = Path(entry.path)
        try:
            if not entry.is_dir(follow_symlinks=False) or not _abandoned(folder, now):
                continue
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _writer() -> dict[str, Any]:
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "started": _process(pid)[1]}


def _abandoned(folder: Path, now: float) -> bool:
    try:
        writer = json.loads(
            read_regular_file(
                folder / _WRITER, limit=4096, error=OutputExistsError, follow_symlinks=False, single_link=True
            )
        )
    except (OutputExistsError, ValueError, RecursionError):
        writer = None  # killed before it wrote the note, or not readable: judged by age
    if isinstance(writer, dict) and writer.get("host") == socket.gethostname():
        alive = _writer_alive(writer.get("pid"), writer.get("started"))
        if alive is not None:
            return not alive
    changed = [info.st_mtime for path in (folder, folder / _FILES) if (info := _lstat(path)) is not None]
    return max(changed, default=0.0) < now - STALE_SECONDS


def _writer_alive(pid: Any, started: Any) -> bool | None:
    """Whether the process that wrote a staging folder still runs: True, False, or None when it cannot be
    told (its process id is in use, but its start time is unknown, so it may be another process)."""
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 1 << 31:
        return None  # never a process group or "every process" for os.kill
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it runs
    except OSError:
        return None
    state, start = _process(pid)
    if state == "Z":  # killed, not yet reaped by its parent
        return False
    if start is None or not isinstance(started, int) or isinstance(started, bool):
        return None
    return start == started  # a different start time: the id was given to another process since


def _process(pid: int) -> tuple[str | None, int | None]:
    """A process's state and start time (clock ticks after boot), from Linux's ``/proc``; None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rsplit(b")", 1)[1].split()  # the command name may hold spaces and ")"
        return fields[0].decode("ascii", "replace"), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None, None


# -- small helpers --------------------------------------------------------------------------------------


def _lstat(path: Path) -> os.stat_result | None:
    """``os.lstat`` of ``path``, None when it is missing (or a part of its folder is a file)."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise OutputExistsError(
            f"{_shown(path)} cannot be checked: {exc.strerror or exc}; choose another output."
        ) from exc


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _shown(path: str | os.PathLike[str]) -> str:
    from ..inputs.files import clean_text

    text = clean_text(os.fspath(path))
    return repr(text if len(text) <= 160 else text[:140] + "...")

"""The manifest of a batch's output folder (``index-manifest.json``): what each index was built from, so a
later run of :func:`~.run.index_documents` skips what is up to date; and the atomic JSON write it uses."""

from __future__ import annotations

import json
import os
import stat
import time
import uuid
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import IndexFormatError, OutputExistsError, PageIndexError, PageIndexWarning
from ..inputs.files import clean_text, read_regular_file

if TYPE_CHECKING:
    from .tasks import BatchEntry

__all__ = [
    "MANIFEST_FILE",
    "MANIFEST_VERSION",
    "REPORT_FILE",
    "Manifest",
    "check_record_paths",
    "write_json_atomically",
]

MANIFEST_FILE = "index-manifest.json"
REPORT_FILE = "index-report.json"
MANIFEST_VERSION = 1
# Seconds between manifest writes while a run goes on (and once at its end): a crash loses at most this
# much of the record, never an index.
WRITE_EVERY = 1.0


def write_json_atomically(path: Path, data: Any) -> None:
    """Write JSON to ``path`` through a temporary file in the same folder and a rename: readers see the old
    file or the new one, never half of one.

    Text that UTF-8 cannot encode (the lone surrogates a file name that is not UTF-8 gives, as
    ``os.listdir`` returns it) is written as JSON's ``\\udcXX`` escape, so it reads back as it was.
    """
    encoded = json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8", "backslashreplace")
    temporary = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        with open(temporary, "wb") as handle:
            handle.write(encoded)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


#: The largest manifest read; a larger one is taken as unreadable.
MAX_MANIFEST_BYTES = 256 << 20


def check_record_paths(out_dir: Path) -> None:
    """Refuse, before a run does any work, an ``out_dir`` whose manifest or report path is a folder: the
    records could not be written there at the end.

    Raises:
        OutputExistsError: ``index-manifest.json`` or ``index-report.json`` in ``out_dir`` is a folder.
    """
    for name in (MANIFEST_FILE, REPORT_FILE):
        path = out_dir / name
        try:
            is_folder = stat.S_ISDIR(os.lstat(path).st_mode)
        except OSError:
            continue  # absent (or unreachable: the write then says why)
        if is_folder:
            raise OutputExistsError(
                f"{clean_text(str(path))!r} is a folder, so the batch's records cannot be written there; "
                "move it away or choose another out_dir."
            )


def _load(path: Path) -> dict[str, dict[str, Any]]:
    """The manifest's records by output; an unreadable manifest only means nothing is skipped (a warning)."""
    if not os.path.lexists(path):
        return {}
    try:
        data = json.loads(
            read_regular_file(path, limit=MAX_MANIFEST_BYTES, error=IndexFormatError, label=repr(str(path)))
        )
        if not isinstance(data, dict):
            raise ValueError("it is not a JSON object")
        if data.get("manifest_version") != MANIFEST_VERSION or not isinstance(data.get("documents"), dict):
            raise ValueError(f"unknown manifest_version {data.get('manifest_version')!r}")
        return {str(key): value for key, value in data["documents"].items() if isinstance(value, dict)}
    except (PageIndexError, ValueError, RecursionError) as exc:
        reason = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc).rstrip(".")
        warnings.warn(
            f"The manifest {clean_text(str(path))!r} cannot be read ({reason}); every document is indexed "
            "again.",
            PageIndexWarning,
            stacklevel=4,
        )
        return {}


class Manifest:
    """The manifest of an output folder: one record per output (its path relative to the folder, in
    POSIX form), written atomically at most every ``WRITE_EVERY`` seconds and by :meth:`save`.

    A record holds the source path, the content's ``sha256``, the ``options`` key, ``status`` (``"ok"`` or
    ``"failed"``), ``pages`` and ``indexed_at``. Used by the one process that runs the batch.
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.path = out_dir / MANIFEST_FILE
        self.records = _load(self.path)
        self.written = time.monotonic()
        self.dirty = False
        self.warned = False

    def _key(self, output: str) -> str:
        return Path(os.path.relpath(output, self.out_dir)).as_posix()

    def previous(self, output: str) -> dict[str, Any] | None:
        """The record of ``output`` from earlier runs, if any."""
        return self.records.get(self._key(output))

    def record(self, output: str, options_key: str, entry: BatchEntry) -> None:
        """Record what a document's run left in ``output``."""
        key = self._key(output)
        if entry.status == "skipped" and key in self.records:
            return  # the record already says what the index holds
        self.records[key] = {
            "source": entry.source,
            "sha256": entry.sha256,
            "options": options_key,
            "status": "failed" if entry.status == "failed" else "ok",
            "pages": entry.pages,
            "indexed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        self.dirty = True
        if time.monotonic() - self.written >= WRITE_EVERY:
            self.save()

    def save(self) -> None:
        """Write the records now, if any changed since the last write.

        A write that fails (a full disk, a folder that became read-only) is a ``PageIndexWarning``, once,
        not an error: the indexes are saved, and a lost record only means the next run builds that
        document again. The records are tried again at the next write.
        """
        if self.dirty:
            documents = dict(sorted(self.records.items()))
            try:
                write_json_atomically(
                    self.path, {"manifest_version": MANIFEST_VERSION, "documents": documents}
                )
                self.dirty = False
            except OSError as exc:
                if not self.warned:
                    self.warned = True
                    warnings.warn(
                        f"The manifest {clean_text(str(self.path))!r} cannot be written "
                        f"({exc.strerror or exc}); the indexes are saved, but the next run builds again "
                        "the documents it could not record.",
                        PageIndexWarning,
                        stacklevel=3,
                    )
        self.written = time.monotonic()

"""The manifest of a batch's output folder (``index-manifest.json``): what each index was built from, so a
later run of :func:`~.batch.index_documents` skips what is up to date; and the atomic JSON write it uses."""

from __future__ import annotations

import json
import os
import time
import uuid
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import PageIndexWarning

if TYPE_CHECKING:
    from .batch import BatchEntry

__all__ = ["MANIFEST_FILE", "MANIFEST_VERSION", "Manifest", "write_json_atomically"]

MANIFEST_FILE = "index-manifest.json"
MANIFEST_VERSION = 1
# Seconds between manifest writes while a run goes on (and once at its end): a crash loses at most this
# much of the record, never an index.
WRITE_EVERY = 1.0


def write_json_atomically(path: Path, data: Any) -> None:
    """Write JSON to ``path`` through a temporary file in the same folder and a rename: readers see the old
    file or the new one, never half of one."""
    temporary = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _load(path: Path) -> dict[str, dict[str, Any]]:
    """The manifest's records by output; an unreadable manifest only means nothing is skipped (a warning)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("manifest_version") != MANIFEST_VERSION or not isinstance(data.get("documents"), dict):
            raise ValueError(f"unknown manifest_version {data.get('manifest_version')!r}")
        return {str(key): value for key, value in data["documents"].items() if isinstance(value, dict)}
    except (OSError, ValueError, AttributeError) as exc:
        warnings.warn(
            f"The manifest {str(path)!r} cannot be read ({exc}); every document is indexed again.",
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
        """Write the records now, if any changed since the last write."""
        if self.dirty:
            documents = dict(sorted(self.records.items()))
            write_json_atomically(self.path, {"manifest_version": MANIFEST_VERSION, "documents": documents})
            self.dirty = False
        self.written = time.monotonic()

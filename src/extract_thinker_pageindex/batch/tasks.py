"""One document of a batch: the task sent to a worker, what happened to it (its entry), and the work a
worker does (:func:`run_task`). The engines and the batch run import this; it imports neither."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..document.render import PageTexts, page_texts
from ..document.store import IMAGE_SUFFIXES

__all__ = ["RETRIEVER_REFUSED", "BatchEntry", "BatchTask", "PageTexts", "Status", "failed_entry", "run_task"]

Status = Literal["ok", "failed", "skipped"]


@dataclass
class BatchEntry:
    """What happened to one document of a batch.

    Attributes:
        name: The document's path relative to the sources' common folder (``"2021/report.pdf"``).
        source: The source file's path, as given or found.
        output: The index folder written (or kept).
        status: ``"ok"`` (indexed now), ``"failed"`` or ``"skipped"`` (its index was up to date).
        pages: Pages in the index (``None`` when it failed).
        seconds: Time spent on the document, in its worker.
        error_type: The exception's class name when it failed.
        error: The exception's message when it failed.
        usage: Model calls and tokens of this build (``Document.usage``), when a model was used.
        sha256: The content's hash (``None`` when the file could not be read).
    """

    name: str
    source: str
    output: str
    status: Status
    pages: int | None = None
    seconds: float = 0.0
    error_type: str | None = None
    error: str | None = None
    usage: dict[str, int] | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class BatchTask:
    """One document's work, as sent to a worker (it pickles: no model object, no callback).

    ``previous`` is the manifest's record of the document (its ``sha256`` and ``options`` key), so the
    worker can tell whether the index is up to date without reading the manifest itself.
    """

    name: str
    source: str
    output: str
    options: dict[str, Any]
    options_key: str
    previous: dict[str, Any] | None = None
    limiter: Any = None
    with_pages: bool = False
    environment: dict[str, str] = field(default_factory=dict)
    #: A retriever the worker writes the pages into itself, pickled (opened inside the task, so a server
    #: that cannot be reached fails that document, not the worker).
    shared_retriever: bytes | None = None


# -- one document, in a worker ---------------------------------------------------------------------------


def _sha256(path: str) -> str:
    """The file's sha256, read through the guarded reader (a FIFO or a device is refused, not read).

    Raises:
        DocumentLoadError: the file is missing, not a regular file, over ``MAX_DOCUMENT_BYTES`` or unreadable.
    """
    from ..errors import DocumentLoadError
    from ..inputs.files import MAX_DOCUMENT_BYTES, hash_regular_file

    return hash_regular_file(path, limit=MAX_DOCUMENT_BYTES, error=DocumentLoadError)


def _discard_damaged(path: Path) -> None:
    """Remove an index this batch wrote that no longer loads, when it holds only what a save writes
    (``document.json``, ``images/*.png`` and ``*.jpg``): moved aside first, so a reader never sees half of
    it. A folder with anything else in it is left alone (and the save then refuses to replace it)."""
    if path.is_symlink() or not path.is_dir():
        return
    entries = {entry.name: entry for entry in path.iterdir()}
    images = entries.get("images")
    if set(entries) - {"document.json", "images"} or (
        images is not None
        and (
            images.is_symlink()
            or not images.is_dir()
            or any(image.suffix not in IMAGE_SUFFIXES or not image.is_file() for image in images.iterdir())
        )
    ):
        return
    aside = path.with_name(f".{path.name}.bad-{uuid.uuid4().hex[:12]}")
    os.rename(path, aside)
    shutil.rmtree(aside, ignore_errors=True)


def run_task(task: BatchTask) -> tuple[BatchEntry, PageTexts | None]:
    """Index one document (or find its index up to date); every failure is caught and recorded.

    Returns:
        The document's entry, and its pages for a retriever when ``task.with_pages`` (else ``None``).
    """
    for key, value in task.environment.items():
        os.environ.setdefault(key, value)
    started = time.perf_counter()
    entry = BatchEntry(task.name, task.source, task.output, "failed")
    try:
        from ..document.store import load_index, save_index
        from ..errors import IndexFormatError

        # Hashed before the build: a file changed meanwhile is recorded with its old hash and redone later.
        entry.sha256 = _sha256(task.source)
        previous = task.previous or {}
        document = None
        if (
            previous.get("status") == "ok"
            and previous.get("sha256") == entry.sha256
            and previous.get("options") == task.options_key
            and os.path.isdir(task.output)
        ):
            try:
                document = load_index(task.output)
                entry.status = "skipped"
            except IndexFormatError:
                _discard_damaged(Path(task.output))  # this batch wrote it; it is built again
        if document is None:
            from ..indexing import build_index

            options = dict(task.options)
            spec = options.get("model")
            if spec is not None:
                from ..llm.call_limit import ModelSpec

                if isinstance(spec, ModelSpec):
                    options["model"] = spec.client(task.limiter)
            document = build_index(task.source, **options)
            save_index(document, task.output)
            entry.status = "ok"
            entry.usage = document.usage.model_dump() if document.usage is not None else None
        entry.pages = len(document.pages)
        pages = page_texts(document) if task.with_pages else None
        if task.shared_retriever is not None:
            _write_to_shared(task, entry, document)
    except Exception as exc:  # one document's failure, whatever it is, must not end the run
        entry.status = "failed"
        entry.error_type = type(exc).__name__
        entry.error = " ".join(str(exc).split()) or type(exc).__name__
        pages = None
    entry.seconds = round(time.perf_counter() - started, 3)
    return entry, pages


def _write_to_shared(task: BatchTask, entry: BatchEntry, document: Any) -> None:
    """Index the document's pages into the task's shared retriever, from the worker; a refusal fails the
    document (its index is saved, but the run promised the retriever too) and leaves it to be redone."""
    import pickle

    try:
        retriever = pickle.loads(task.shared_retriever or b"")
        try:
            retriever.index(task.name, page_texts(document))
        finally:
            retriever.close()
    except Exception as exc:
        refused = failed_entry(task, exc, RETRIEVER_REFUSED)
        entry.status, entry.error_type, entry.error = refused.status, refused.error_type, refused.error
        entry.sha256 = None


RETRIEVER_REFUSED = "the index was saved but the retriever refused it"


def failed_entry(task: BatchTask, exc: BaseException, what: str) -> BatchEntry:
    """The entry of a document whose worker itself failed (it died, or the engine lost it)."""
    return BatchEntry(
        task.name,
        task.source,
        task.output,
        "failed",
        error_type=type(exc).__name__,
        error=f"{what} ({type(exc).__name__}: {' '.join(str(exc).split())}); run again to retry it.",
    )

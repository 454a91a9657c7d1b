"""OCR of many pages side by side, in worker processes.

MuPDF's Tesseract cannot run in two threads of one process, and OCR costs seconds a page, so pages go to
worker processes (``ocr_workers``, by default one per core), one page at a time each: memory stays that of
one page per worker, whatever the document's length. The workers are plain subprocesses of this Python
(``python -m extract_thinker_pageindex.ocr.worker``), not ``multiprocessing`` children, so a caller's script
is never imported again in them and needs no ``if __name__ == "__main__"`` guard.

One page, or ``ocr_workers=1``, is read in this process under ``PYMUPDF_LOCK``. A page the engine fails on,
or whose worker dies (a crash inside a library), is reported as failed and the rest go on (a new worker
takes the place of a dead one, up to a few times). On an interrupt or any error of the caller, every worker
is killed before the exception goes on: nothing is left running, and nothing has been written.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import OcrError
from .settings import OcrSettings
from .worker import read_frame, write_frame

__all__ = ["OcrOutcome", "ocr_pages", "warn_failures"]

#: How many dead workers are replaced in one run before the remaining pages are given up.
MAX_RESTARTS = 3


@dataclass
class OcrOutcome:
    """One page's OCR: its blocks (PyMuPDF ``dict`` layout, page points) and ruled tables (see
    :class:`~.engines.OcrRead`), or why it failed."""

    index: int
    blocks: list[dict[str, Any]] | None
    error: str | None = None
    tables: list[dict[str, Any]] = field(default_factory=list)


def warn_failures(failures: Sequence[OcrOutcome], name: str, *, stacklevel: int) -> None:
    """One warning for the pages OCR failed on (they keep what their text layer had), if any."""
    if not failures:
        return
    import warnings

    from ..errors import PageIndexWarning

    listed = "; ".join(f"page {outcome.index + 1}: {outcome.error}" for outcome in failures)
    warnings.warn(
        f"OCR failed on {len(failures)} page(s) of {name}; they keep their text layer: {listed}",
        PageIndexWarning,
        stacklevel=stacklevel + 1,
    )


def _worker_env(settings: OcrSettings) -> dict[str, str]:
    env = dict(os.environ)
    # One thread per worker: the workers already use every core, and Tesseract's OpenMP threads only
    # compete with them.
    env["OMP_THREAD_LIMIT"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return env


class _Worker:
    def __init__(self, job: dict[str, Any], env: dict[str, str]) -> None:
        """Start a worker process and hand it the job.

        Raises:
            OcrError: the process cannot start (``sys.executable`` is no Python that can run the worker: a
                frozen or embedded application), stops before it is ready, or reports it cannot OCR.
        """
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "extract_thinker_pageindex.ocr.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError as exc:
            raise OcrError(f"OCR workers cannot start: {sys.executable!r} cannot be run ({exc}).") from exc
        assert self.process.stdin is not None and self.process.stdout is not None
        self.requests = self.process.stdin
        self.answers = self.process.stdout
        try:
            write_frame(self.requests, job)
            status, _, message = read_frame(self.answers)
        except (EOFError, OSError, ValueError) as exc:
            self.kill()
            raise OcrError(
                f"OCR workers cannot start: {sys.executable} -m extract_thinker_pageindex.ocr.worker stopped "
                f"before it was ready (exit code {self.process.returncode}; is it this package's Python?)."
            ) from exc
        if status != "ready":
            self.kill()
            raise OcrError(f"OCR cannot run: {message}.")

    def ask(self, index: int) -> tuple[str, int, Any]:
        write_frame(self.requests, index)
        answer: tuple[str, int, Any] = read_frame(self.answers)
        return answer

    def close(self) -> None:
        try:
            write_frame(self.requests, None)
            self.requests.close()
            self.process.wait(timeout=5)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.requests, self.answers):
            with contextlib.suppress(OSError):
                stream.close()


def _in_process(
    document: Any, indices: Sequence[int], settings: OcrSettings, done: Callable[[OcrOutcome], None]
) -> None:
    from ..pdf.opening import PYMUPDF_LOCK
    from .engines import read_page

    for index in indices:
        with PYMUPDF_LOCK:
            try:
                read = read_page(document[index], settings, threads=settings.worker_count)
            except OcrError as exc:
                done(OcrOutcome(index, None, str(exc)))
                continue
        done(OcrOutcome(index, read.blocks, tables=read.tables))


def ocr_pages(
    document: Any,
    source: str | bytes,
    indices: Sequence[int],
    settings: OcrSettings,
    done: Callable[[OcrOutcome], None],
    *,
    password: str | None = None,
) -> None:
    """OCR the pages ``indices`` of a PDF, calling ``done(outcome)`` in this thread as each finishes.

    Args:
        document: The open PyMuPDF document (used when the pages are read in this process).
        source: The PDF's path or bytes (what worker processes open).
        indices: 0-based page indices.
        settings: The engine, languages, resolution and worker count.
        done: Called once per page, in the order pages finish.
        password: The PDF's password, if it has one.

    Raises:
        OcrError: the workers cannot start, or cannot open the PDF.
    """
    indices = list(indices)
    workers = min(settings.worker_count, len(indices))
    if workers <= 1:
        _in_process(document, indices, settings, done)
        return
    job = {"source": source, "password": password, "settings": asdict(settings)}
    env = _worker_env(settings)
    pending: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for index in indices:
        pending.put(index)
    results: queue.SimpleQueue[OcrOutcome | BaseException] = queue.SimpleQueue()
    live: list[_Worker] = []
    lock = threading.Lock()
    stopping = threading.Event()
    restarts = [0]

    def start() -> _Worker:
        worker = _Worker(job, env)
        with lock:
            live.append(worker)
            if stopping.is_set():  # the caller gave up while this one started
                worker.kill()
        return worker

    def serve() -> None:
        try:
            worker = start()
        except BaseException as exc:
            results.put(exc)
            return
        while not stopping.is_set():
            try:
                index = pending.get_nowait()
            except queue.Empty:
                break
            if index is None:
                break
            try:
                status, _, payload = worker.ask(index)
            except (EOFError, OSError, ValueError):
                if stopping.is_set():
                    return
                code = worker.process.poll()
                results.put(OcrOutcome(index, None, f"the OCR worker stopped (exit code {code})"))
                with lock:
                    restarts[0] += 1
                    give_up = restarts[0] > MAX_RESTARTS
                if give_up:
                    while True:  # the remaining pages fail rather than crash more workers
                        try:
                            left = pending.get_nowait()
                        except queue.Empty:
                            return
                        if left is not None:
                            results.put(OcrOutcome(left, None, "OCR workers kept stopping"))
                try:
                    worker = start()
                except BaseException as exc:
                    results.put(exc)
                    return
                continue
            if status == "ok":
                results.put(OcrOutcome(index, payload[0], tables=payload[1]))
            else:
                results.put(OcrOutcome(index, None, str(payload)))
        worker.close()

    threads = [threading.Thread(target=serve, name=f"ocr-worker-{n}", daemon=True) for n in range(workers)]
    for thread in threads:
        thread.start()
    try:
        remaining = len(indices)
        while remaining:
            item = results.get()
            if isinstance(item, BaseException):
                raise item
            remaining -= 1
            done(item)
    finally:
        stopping.set()
        with lock:
            for worker in live:
                worker.kill()
        for thread in threads:
            thread.join(timeout=10)

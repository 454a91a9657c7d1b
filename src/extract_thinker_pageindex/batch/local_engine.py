"""The local engine of :func:`~.run.index_documents`: documents indexed in this process, or in worker
processes of this machine (``concurrent.futures``, started from a fork server, or with ``spawn``)."""

from __future__ import annotations

import multiprocessing
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from dataclasses import replace

from .tasks import BatchEntry, BatchTask, PageTexts, failed_entry, run_task

__all__ = ["run_local"]

Result = tuple[BatchTask, BatchEntry, "PageTexts | None"]


def _in_process(tasks: Sequence[BatchTask], model_rate: int | None) -> Iterator[Result]:
    limiter = None
    if model_rate is not None:
        from ..llm.call_limit import SemaphoreLimiter

        limiter = SemaphoreLimiter(threading.BoundedSemaphore(model_rate))
    for task in tasks:
        task = replace(task, limiter=limiter)
        entry, pages = run_task(task)
        yield task, entry, pages


#: What the fork server imports once, so each worker forked from it starts with it loaded.
_PRELOAD = [
    "extract_thinker_pageindex.batch.tasks",
    "extract_thinker_pageindex.indexing",
    "extract_thinker_pageindex.document.store",
]
# With a model: ExtractThinker (and litellm, about five seconds), and what reading a page with it imports.
_PRELOAD_MODEL = [
    "extract_thinker",
    "extract_thinker_pageindex.llm.call_limit",
    "extract_thinker_pageindex.llm.prompting",
    "extract_thinker_pageindex.strategies.pdf_text",
    "extract_thinker_pageindex.strategies.vision",
]


def _context(with_model: bool) -> multiprocessing.context.BaseContext:
    """``forkserver`` where there is one (workers fork from a clean single-threaded server that has the
    package, and ExtractThinker when a model is used, imported already), else ``spawn``.

    Never plain ``fork``: the calling process may run threads (a model server, Ray, litellm's), and a fork
    copies their locks in whatever state they are.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    # Takes effect when the fork server starts (the first pool of the process); harmless afterwards.
    context.set_forkserver_preload(_PRELOAD + (_PRELOAD_MODEL if with_model else []))
    return context


def run_local(tasks: Sequence[BatchTask], *, workers: int, model_rate: int | None) -> Iterator[Result]:
    """Run the tasks, yielding each ``(task, entry, pages)`` as it finishes.

    ``workers == 1`` runs them one after another in this process. Otherwise a pool of ``workers`` processes
    runs them, a few at a time per worker, so that a worker that dies (a crash inside a PDF library) fails
    only the documents in flight with it: they are recorded as failed, a new pool takes the rest.
    ``model_rate`` bounds the model calls in flight across the workers with a semaphore (of this process,
    or of a ``multiprocessing`` manager shared by the worker processes).
    """
    if workers == 1:
        yield from _in_process(tasks, model_rate)
        return
    context = _context(any(task.options.get("model") is not None for task in tasks))
    with ExitStack() as stack:
        limiter = None
        if model_rate is not None:
            from ..llm.call_limit import SemaphoreLimiter

            manager = stack.enter_context(context.Manager())
            limiter = SemaphoreLimiter(manager.BoundedSemaphore(model_rate))
        pending = deque(replace(task, limiter=limiter) for task in tasks)
        # Each future with its task and the pool that runs it (a broken pool is replaced, not its successor).
        in_flight: dict[
            Future[tuple[BatchEntry, PageTexts | None]], tuple[BatchTask, ProcessPoolExecutor]
        ] = {}
        pool: ProcessPoolExecutor | None = None
        try:
            while pending or in_flight:
                if pool is None:
                    pool = ProcessPoolExecutor(workers, mp_context=context)
                while pending and len(in_flight) < 2 * workers:
                    task = pending.popleft()
                    in_flight[pool.submit(run_task, task)] = (task, pool)
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    task, ran_in = in_flight.pop(future)
                    pages: PageTexts | None = None
                    try:
                        entry, pages = future.result()
                    except BrokenProcessPool as exc:
                        if ran_in is pool:
                            pool.shutdown(wait=False, cancel_futures=True)
                            pool = None
                        entry = failed_entry(task, exc, "a worker process ended unexpectedly while it ran")
                    except Exception as exc:  # the task could not be sent or its result not returned
                        entry = failed_entry(task, exc, "its worker process could not run it")
                    yield task, entry, pages
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

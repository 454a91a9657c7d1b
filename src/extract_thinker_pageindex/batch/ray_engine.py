"""The Ray engine of :func:`~.run.index_documents`: each document a Ray task, and model calls bounded across
the whole cluster by one named actor per model.

Ray is imported here only, when the engine runs (the ``[ray]`` extra): nothing of it is on the import path
of the package.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InvalidOptionError
from ..llm.call_limit import LeaseSemaphore, ModelSpec
from .tasks import BatchEntry, BatchTask, PageTexts, failed_entry, run_task

__all__ = ["NAMESPACE", "RayEngine", "RayLimiter", "import_ray", "limiter_name", "model_limiter"]

#: The Ray namespace of the limiter actors, so that every driver on a cluster finds the same ones.
NAMESPACE = "extract_thinker_pageindex"


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        InvalidOptionError: Ray is not installed.
    """
    try:
        import ray
    except ImportError as exc:
        raise InvalidOptionError(
            "engine='ray' needs Ray, which is not installed; install the extra: "
            "pip install 'extract-thinker-pageindex[ray]' (or use engine='local')."
        ) from exc
    return ray


def limiter_name(model: str) -> str:
    """The name of the limiter actor of a model (one per model name on a cluster)."""
    return f"model-calls:{model}"


def model_limiter(model: str, model_rate: int) -> Any:
    """The cluster's limiter actor of ``model``, made if there is none, set to ``model_rate`` permits.

    The actor is detached (it outlives the driver that made it, so that runs of several drivers share it);
    the latest run's ``model_rate`` applies to all.
    """
    ray = import_ray()
    actor = (
        ray.remote(LeaseSemaphore)
        .options(
            name=limiter_name(model),
            namespace=NAMESPACE,
            lifetime="detached",
            get_if_exists=True,
            num_cpus=0,
        )
        .remote(model_rate)
    )
    ray.get(actor.configure.remote(model_rate))
    return actor


@dataclass
class RayLimiter:
    """A :class:`~..llm.call_limit.CallLimiter` over the limiter actor (a handle, which pickles into
    tasks)."""

    actor: Any

    def acquire(self, lease: float) -> str:
        import ray

        return str(ray.get(self.actor.acquire.remote(lease)))

    def release(self, token: Any) -> None:
        import ray

        ray.get(self.actor.release.remote(token))


class RayEngine:
    """Runs the tasks on Ray; iterate it for ``(task, entry, pages)`` as each finishes.

    Ray is initialised (``ray.init(address=address)``) unless it already is, and shut down at the end when
    this engine initialised it. At most ``workers`` documents are in flight (default: the cluster's CPUs);
    each task takes one CPU. ``workers`` holds the figure used once the run started.

    Raises:
        InvalidOptionError: Ray is not installed (raised when the engine is made, before any work).
    """

    def __init__(
        self, tasks: Sequence[BatchTask], *, workers: int | None, address: str | None, model_rate: int | None
    ) -> None:
        self.ray = import_ray()
        self.tasks = list(tasks)
        self.workers = workers or 0
        self.address = address
        self.model_rate = model_rate

    def _limited(self) -> list[BatchTask]:
        spec = self.tasks[0].options.get("model") if self.tasks else None
        if self.model_rate is None or not isinstance(spec, ModelSpec):
            return self.tasks
        limiter = RayLimiter(model_limiter(spec.name, self.model_rate))
        return [replace(task, limiter=limiter) for task in self.tasks]

    def __iter__(self) -> Iterator[tuple[BatchTask, BatchEntry, PageTexts | None]]:
        ray = self.ray
        started = not ray.is_initialized()
        if started:
            ray.init(address=self.address)
        in_flight: dict[Any, BatchTask] = {}
        try:
            if not self.workers:
                self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
            pending = self._limited()[::-1]
            # A worker that dies is retried once (its node may have gone); exceptions are the task's own.
            remote = ray.remote(num_cpus=1, max_retries=1)(run_task)
            while pending or in_flight:
                while pending and len(in_flight) < self.workers:
                    task = pending.pop()
                    in_flight[remote.remote(task)] = task
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in ready:
                    task = in_flight.pop(ref)
                    pages: PageTexts | None = None
                    try:
                        entry, pages = ray.get(ref)
                    except Exception as exc:  # the worker or its node died; Ray gave up on the task
                        entry = failed_entry(task, exc, "its Ray task failed")
                    yield task, entry, pages
        finally:
            for ref in in_flight:
                ray.cancel(ref)
            if started:
                ray.shutdown()

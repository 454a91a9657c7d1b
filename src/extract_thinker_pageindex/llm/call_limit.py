"""Model calls bounded across threads, processes or a Ray cluster, and models sent to worker processes.

A :class:`LimitedModelClient` takes a permit from a :class:`CallLimiter` around each HTTP call (never while
it backs off between retries), so ``limit`` is the most model calls in flight at any moment, whichever
worker makes them. The limiter is a semaphore of this process (threads), of a ``multiprocessing`` manager
(the local engine's worker processes) or a Ray actor (the Ray engine, see
:mod:`~extract_thinker_pageindex.batch.ray_engine`).
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import InvalidOptionError
from .client import ModelClient

__all__ = [
    "CallLimiter",
    "LeaseSemaphore",
    "LimitedModelClient",
    "ModelSpec",
    "SemaphoreLimiter",
    "model_spec",
]

#: Seconds a permit outlives the call's own timeout before the limiter takes it back (a worker that died
#: holding it must not shrink the limit for good).
LEASE_MARGIN = 30.0


class CallLimiter(Protocol):
    """Hands out permits for model calls: ``acquire`` blocks until one is free."""

    def acquire(self, lease: float) -> Any:
        """Wait for a permit, held for at most ``lease`` seconds; returns the token to release it with."""

    def release(self, token: Any) -> None:
        """Give the permit back."""


@dataclass
class SemaphoreLimiter:
    """A limiter over a semaphore: ``threading.BoundedSemaphore`` for threads of one process, or a
    ``multiprocessing`` manager's semaphore (a proxy, which pickles) for worker processes of one machine."""

    semaphore: Any

    def acquire(self, lease: float) -> None:
        self.semaphore.acquire()

    def release(self, token: Any) -> None:
        self.semaphore.release()


class LimitedModelClient(ModelClient):
    """A :class:`~.client.ModelClient` whose every HTTP call holds a permit of ``limiter``.

    Args:
        model: As for ``ModelClient``.
        limiter: Where permits come from (see :class:`CallLimiter`).
        **settings: The other ``ModelClient`` settings (``api_base``, ``timeout``, ...).
    """

    def __init__(self, model: Any, *, limiter: CallLimiter, **settings: Any) -> None:
        super().__init__(model, **settings)
        self.limiter = limiter

    def _complete(self, messages: list[dict[str, Any]], timeout: float, extra: dict[str, Any]) -> Any:
        token = self.limiter.acquire(timeout + LEASE_MARGIN)
        try:
            return super()._complete(messages, timeout, extra)
        finally:
            self.limiter.release(token)


# The ModelClient settings a spec carries (its constructor's keywords, read back from the attributes).
_SETTINGS = (
    "api_base",
    "api_key",
    "timeout",
    "attempts",
    "repairs",
    "backoff",
    "max_backoff",
    "bbox_scale",
    "structured_output",
    "image_limits",
)


@dataclass(frozen=True)
class ModelSpec:
    """How to make the model client in a worker: a model name and ``ModelClient`` settings.

    In-process work may carry the user's own object in ``model`` (an ExtractThinker ``LLM``); what crosses
    to another process is a name, checked to pickle by :func:`model_spec`.
    """

    model: Any
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(getattr(self.model, "model", self.model))

    def client(self, limiter: CallLimiter | None = None) -> ModelClient:
        """A new client from the spec, its calls bounded by ``limiter`` when one is given."""
        if limiter is None:
            return ModelClient(self.model, **self.settings)
        return LimitedModelClient(self.model, limiter=limiter, **self.settings)


def model_spec(model: Any, *, portable: bool) -> ModelSpec:
    """The spec of what a user passed as ``model=``: a name, a ``ModelClient`` or an ExtractThinker ``LLM``.

    Args:
        model: The ``model=`` option.
        portable: The spec goes to other processes: it must hold a name and settings that pickle.

    Raises:
        InvalidOptionError: the model cannot be sent to another process (an ``LLM`` object, a client of a
            router, settings that do not pickle), or is no model at all.
    """
    if isinstance(model, str):
        if not model.strip():
            raise InvalidOptionError("model must be a litellm model name; got an empty string.")
        return ModelSpec(model)
    if isinstance(model, ModelClient):
        settings = {name: getattr(model, name) for name in _SETTINGS}
        settings["structured_output"] = model.structured_output_option  # each worker finds its own path
        if model.sleep is not time.sleep:
            settings["sleep"] = model.sleep
        router = getattr(model.llm, "router", None)
        spec = ModelSpec(model.llm if router is not None else model.model, settings)
    elif portable:
        raise InvalidOptionError(
            f"model={type(model).__name__} cannot be sent to worker processes; pass a litellm model name "
            "(a string) or a ModelClient built from one, or index in this process (engine='local', "
            "workers=1)."
        )
    else:
        spec = ModelSpec(model)
    if portable:
        if not isinstance(spec.model, str):
            raise InvalidOptionError(
                "A ModelClient of an ExtractThinker LLM with a router cannot be sent to worker processes; "
                "pass a model name, or index in this process (engine='local', workers=1)."
            )
        try:
            pickle.dumps(spec)
        except Exception as exc:
            raise InvalidOptionError(
                f"The settings of model={model!r} cannot be sent to worker processes ({exc}); pass a model "
                "name, or a ModelClient without a custom sleep function."
            ) from exc
    return spec


class LeaseSemaphore:
    """A semaphore of ``limit`` permits, each lent for a limited time (the state of the Ray engine's limiter
    actor; asyncio, so one actor serves many waiting workers).

    A permit not released when its lease ends (its worker died) is taken back, so the limit recovers.
    ``peak`` is the most permits ever out at once.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.peak = 0
        self.granted = 0
        self._held: dict[str, float] = {}
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        # Made on first use, inside the event loop that serves the calls.
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    def _reclaim(self) -> None:
        now = time.monotonic()
        for token, until in list(self._held.items()):
            if until <= now:
                del self._held[token]

    async def configure(self, limit: int) -> None:
        """Change the number of permits (a new run of the same model)."""
        changed = self._condition()
        async with changed:
            self.limit = limit
            changed.notify_all()

    async def acquire(self, lease: float) -> str:
        """Wait for a permit, lent for ``lease`` seconds; returns its token."""
        changed = self._condition()
        async with changed:
            while True:
                self._reclaim()
                if len(self._held) < self.limit:
                    token = uuid.uuid4().hex
                    self._held[token] = time.monotonic() + lease
                    self.granted += 1
                    self.peak = max(self.peak, len(self._held))
                    return token
                # Woken by a release, or when the first lease runs out.
                wait = max(0.01, min(self._held.values()) - time.monotonic())
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(changed.wait(), timeout=wait)

    async def release(self, token: str) -> None:
        """Give a permit back (a token whose lease already ran out is ignored)."""
        changed = self._condition()
        async with changed:
            if self._held.pop(token, None) is not None:
                changed.notify()

    async def stats(self) -> dict[str, int]:
        """``limit``, ``held`` (permits out now), ``peak`` and ``granted`` (permits lent in all)."""
        return {"limit": self.limit, "held": len(self._held), "peak": self.peak, "granted": self.granted}

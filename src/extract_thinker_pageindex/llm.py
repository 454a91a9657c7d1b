"""The one place that talks to models: ExtractThinker's ``LLM`` (instructor over litellm) with a per-call
timeout, bounded retries with exponential backoff and jitter on rate limits, server errors, timeouts and
connection errors, a bounded repair of invalid answers, and token accounting.

Model names, ``api_base`` and ``api_key`` follow litellm's conventions; so do its environment variables
(``OPENAI_API_BASE`` and ``OPENAI_API_KEY`` with an ``openai/<name>`` model reach any OpenAI-compatible
server).
"""

from __future__ import annotations

import base64
import random
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import InvalidOptionError, LLMExtractionError

__all__ = ["ModelClient", "Usage", "as_model_client", "image_part"]

T = TypeVar("T", bound=BaseModel)

# Families that answer bounding boxes in 0-1000 coordinates rather than pixels of the image they saw.
NORMALISED_BBOX_FAMILIES = ("glm-4", "glm4", "qwen", "qwen2", "qwen2.5", "qwen3", "gemini")


@dataclass
class Usage:
    """What the model calls of one job cost: calls made (retries included) and tokens in and out."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, calls: int = 0, input_tokens: int = 0, output_tokens: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.input_tokens += input_tokens
            self.output_tokens += output_tokens

    def as_dict(self) -> dict[str, int]:
        return {"calls": self.calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


def image_part(png: bytes) -> dict[str, Any]:
    """An OpenAI-style message part holding a PNG as a data URL."""
    return {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
    }


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _classify(exc: BaseException) -> tuple[str, float | None, str]:
    """``(kind, retry_after, reason)``: kind is "transient", "invalid" or "fatal"."""
    import litellm

    chain = _chain(exc)
    if any(type(item).__name__ == "IncompleteOutputException" for item in chain):
        # Asking again gets the same cut; the caller must allow longer answers or send less.
        return "invalid", None, "the answer was cut off by the model's output token limit"
    for item in chain:
        status = getattr(item, "status_code", None)
        retry_after = None
        response = getattr(item, "response", None)
        headers = getattr(response, "headers", None)
        if headers is not None:
            try:
                retry_after = float(headers.get("retry-after"))
            except (TypeError, ValueError):
                retry_after = None
        if isinstance(item, litellm.RateLimitError) or status == 429:
            return "transient", retry_after, "rate limited (429)"
        if isinstance(item, (litellm.Timeout, TimeoutError)):
            return "transient", None, "the call timed out"
        if isinstance(item, litellm.APIConnectionError):
            return "transient", None, "could not connect to the model server"
        if isinstance(status, int) and status >= 500:
            return "transient", retry_after, f"server error ({status})"
        if isinstance(item, (litellm.AuthenticationError, litellm.BadRequestError, litellm.NotFoundError)):
            return "fatal", None, f"{type(item).__name__}: {item}"
    if any(isinstance(item, (ValidationError, ValueError)) for item in chain):
        return "invalid", None, "the answer did not match the expected schema"
    return "fatal", None, f"{type(exc).__name__}: {exc}"


class ModelClient:
    """Structured model calls with retries, timeouts and usage accounting.

    Args:
        model: A litellm model name (``"gpt-4o-mini"``, ``"openai/<name>"``) or an ExtractThinker ``LLM``.
        api_base: Base URL of the provider or an OpenAI-compatible server (litellm's ``api_base``).
        api_key: API key (litellm's ``api_key``); by default litellm reads the provider's variable.
        timeout: Seconds one HTTP call may take.
        attempts: Calls at most per request when the server is busy, failing or slow (429, 5xx, timeouts,
            connection errors), with exponential backoff and jitter between them.
        repairs: Extra calls at most when an answer is not valid JSON for the schema; the model is shown
            its error and asked again.
        backoff: First backoff in seconds; doubles each attempt, up to ``max_backoff``.
        bbox_scale: ``"pixels"`` or ``"normalized"`` (0-1000); by default from the model family.
        sleep: The sleep function (tests pass one that records instead of waiting).

    One client may be shared by threads; usage is accumulated across them.
    """

    def __init__(
        self,
        model: Any,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        attempts: int = 4,
        repairs: int = 1,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        bbox_scale: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        from extract_thinker import LLM

        if isinstance(model, LLM):
            self.llm = model
        elif isinstance(model, str) and model.strip():
            self.llm = LLM(model)
        else:
            raise InvalidOptionError(
                f"model must be a litellm model name or an ExtractThinker LLM; got {model!r}."
            )
        whole = (attempts, repairs)
        if (
            any(isinstance(value, bool) or not isinstance(value, int) for value in whole)
            or attempts < 1
            or repairs < 0
        ):
            raise InvalidOptionError(f"attempts must be a whole number >= 1 and repairs >= 0; got {whole}.")
        if not all(
            isinstance(value, (int, float)) and value >= 0 for value in (timeout, backoff, max_backoff)
        ) or (timeout <= 0):
            raise InvalidOptionError("timeout must be > 0, backoff and max_backoff >= 0 (seconds).")
        if getattr(model, "client", True) is None:
            raise InvalidOptionError(
                "This LLM has no instructor client (a pydantic-ai backend); use litellm's."
            )
        if bbox_scale not in (None, "pixels", "normalized"):
            raise InvalidOptionError(f"bbox_scale must be 'pixels' or 'normalized'; got {bbox_scale!r}.")
        self.model = str(self.llm.model)
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.attempts = attempts
        self.repairs = repairs
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.sleep = sleep
        self.usage = Usage()
        _install_hooks(self.llm.client)
        family = self.model.lower().rsplit("/", 1)[-1]
        self.bbox_scale = bbox_scale or (
            "normalized" if family.startswith(NORMALISED_BBOX_FAMILIES) else "pixels"
        )
        self._quiet()

    @staticmethod
    def _quiet() -> None:
        import litellm

        # litellm prints a feedback banner on every failed call; failures are reported as errors here.
        litellm.suppress_debug_info = True

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff)
        base = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
        return base / 2 + random.uniform(0, base / 2)

    def ask(
        self,
        messages: Sequence[dict[str, Any]],
        response_model: type[T],
        *,
        what: str,
        deadline: float | None = None,
        max_tokens: int | None = None,
    ) -> T:
        """One structured answer, retried as the class says.

        Args:
            messages: OpenAI-style chat messages.
            response_model: The Contract the answer must validate against.
            what: What is asked, for error messages ("page 3").
            deadline: A ``time.monotonic()`` value after which no new attempt starts.
            max_tokens: Limit on the answer's tokens.

        Raises:
            LLMExtractionError: every attempt failed, the answer stayed invalid, or the error cannot be
                retried (authentication, a bad request); the message says which and why.
        """
        extra: dict[str, Any] = {}
        if self.api_base:
            extra["api_base"] = self.api_base
        if self.api_key:
            extra["api_key"] = self.api_key
        if max_tokens:
            extra["max_tokens"] = max_tokens
        reason = "no attempt was made"
        for attempt in range(1, self.attempts + 1):
            if deadline is not None and time.monotonic() >= deadline:
                if attempt == 1:
                    raise LLMExtractionError(f"The model could not extract {what}: no time was left to ask.")
                raise LLMExtractionError(
                    f"The model could not extract {what}: the time allowed ran out after {attempt - 1} "
                    f"attempt(s); last: {reason}."
                )
            timeout = self.timeout
            if deadline is not None:
                timeout = max(1.0, min(timeout, deadline - time.monotonic()))
            _ACTIVE.client = self  # instructor's hooks count this thread's calls for this client
            try:
                result = self.llm.client.chat.completions.create(
                    model=self.model,
                    messages=list(messages),
                    response_model=response_model,
                    max_retries=self.repairs,  # instructor re-asks this many times on an invalid answer
                    num_retries=0,  # HTTP-level retries are this loop's, with backoff
                    timeout=timeout,
                    temperature=0,
                    **extra,
                )
            except Exception as exc:
                kind, retry_after, reason = _classify(exc)
                if kind == "transient" and attempt < self.attempts:
                    delay = self._delay(attempt, retry_after)
                    if deadline is not None:
                        delay = min(delay, max(0.0, deadline - time.monotonic()))  # never sleep past it
                    self.sleep(delay)
                    continue
                if kind == "invalid" and "cut off" not in reason:
                    reason = f"{reason} after {1 + self.repairs} answer(s)"
                raise LLMExtractionError(f"The model could not extract {what}: {reason}.") from exc
            finally:
                _ACTIVE.client = None
            return result
        raise LLMExtractionError(f"The model could not extract {what}: {reason} ({self.attempts} attempts).")


# The client asking on each thread: instructor's hooks are installed once per instructor client (an LLM may
# be shared by many ModelClients) and credit calls to whichever ModelClient is asking on that thread.
_ACTIVE = threading.local()
_HOOKED: weakref.WeakSet[Any] = weakref.WeakSet()
_HOOK_LOCK = threading.Lock()


def _on_response(response: Any) -> None:
    client = getattr(_ACTIVE, "client", None)
    if client is not None:
        usage = getattr(response, "usage", None)
        client.usage.add(
            calls=1,
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )


def _on_error(error: Any) -> None:
    client = getattr(_ACTIVE, "client", None)
    if client is not None:
        client.usage.add(calls=1)


def _install_hooks(instructor_client: Any) -> None:
    """instructor calls these for every HTTP answer and error, re-asks included: the true call count."""
    with _HOOK_LOCK:
        try:
            if instructor_client in _HOOKED:
                return
            _HOOKED.add(instructor_client)
        except TypeError:  # not weak-referenceable: install anyway (it is then once per ModelClient)
            pass
        instructor_client.on("completion:response", _on_response)
        instructor_client.on("completion:error", _on_error)


def as_model_client(model: Any) -> ModelClient:
    """A ``ModelClient`` from what users pass as ``model=``: a client, an ExtractThinker LLM or a name."""
    return model if isinstance(model, ModelClient) else ModelClient(model)

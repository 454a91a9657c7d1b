"""The one place that talks to models: litellm's completion (or the router of an ExtractThinker ``LLM``)
with a per-call timeout, bounded retries with exponential backoff and jitter on rate limits, server errors,
timeouts and connection errors, a bounded repair of invalid answers, and token accounting.

Requests are laid out by :mod:`.prompting`: a fixed prefix first (instructions, and the compact answer
schema when the prompt carries it), byte-identical across a run's pages so that providers' prompt caching
applies, then the per-page facts and the image. The answer is validated against the exact answer model.

Model names, ``api_base`` and ``api_key`` follow litellm's conventions; so do its environment variables
(``OPENAI_API_BASE`` and ``OPENAI_API_KEY`` with an ``openai/<name>`` model reach any OpenAI-compatible
server).
"""

from __future__ import annotations

import base64
import json
import random
import re
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import InvalidOptionError, LLMExtractionError, PageIndexWarning
from ..pdf.images import DEFAULT_IMAGE_LIMITS, ImageLimits

__all__ = ["IMAGE_LIMITS", "ImageLimits", "ModelClient", "Usage", "as_model_client", "image_part"]

T = TypeVar("T", bound=BaseModel)

#: The page image each model family sees, after its provider's own downscaling (documented in
#: docs/models.md): OpenAI fits a high-detail image in 2048 x 2048 and then scales its shorter side to 768;
#: Anthropic resizes past 1568 px on the long side or about 1.15 megapixels; Gemini tiles images in
#: 768 px squares (1536 px: four tiles); Qwen-VL's default is at most 1280 patches of 28 x 28 px.
IMAGE_LIMITS: dict[str, ImageLimits] = {
    "openai": ImageLimits(max_side=2048, max_pixels=2048 * 768, max_short_side=768),
    "anthropic": ImageLimits(max_side=1568, max_pixels=1_150_000),
    "gemini": ImageLimits(max_side=1536, max_pixels=1536 * 1536),
    "qwen": ImageLimits(max_side=2048, max_pixels=1280 * 28 * 28),
}

#: Qwen2.5-VL answers boxes in pixels of its input as its processor resized it (sides rounded to
#: multiples of 28 within ``max_pixels``), not in 0-1000 as Qwen2-VL and Qwen3-VL do (QwenLM/Qwen3-VL
#: issues 676 and 721). Its page image is sent at a size that resize leaves as it is, so that its boxes are
#: in pixels of the image sent.
QWEN25_IMAGE_LIMITS = ImageLimits(max_side=2048, max_pixels=1280 * 28 * 28, multiple_of=28)

# Families that answer bounding boxes in 0-1000 coordinates rather than pixels of the image they saw
# (names of Qwen2.5-VL, which answers in pixels, are told apart first: see ``is_qwen25_vl``).
NORMALISED_BBOX_FAMILIES = ("glm-4", "glm4", "qwen", "gemini")

# qwen2.5-vl-72b-instruct, Qwen/Qwen2.5-VL-7B-Instruct, qwen2_5_vl, Ollama's qwen2.5vl:7b.
_QWEN25_VL = re.compile(r"qwen2[._]?5[-_]?vl")


def is_qwen25_vl(model: str) -> bool:
    """Whether a model name is a Qwen2.5-VL model (boxes in pixels of its resized input)."""
    return _QWEN25_VL.search(model.lower().rsplit("/", 1)[-1]) is not None


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


def default_bbox_scale(model: str) -> str:
    """The coordinates a model answers boxes in, by its name: "normalized" (0-1000) or "pixels"."""
    if is_qwen25_vl(model):
        return "pixels"
    return "normalized" if model.lower().rsplit("/", 1)[-1].startswith(NORMALISED_BBOX_FAMILIES) else "pixels"


def default_image_limits(model: str) -> ImageLimits:
    """The page image a model of this name sees (its family's :data:`IMAGE_LIMITS`; Qwen2.5-VL's
    :data:`QWEN25_IMAGE_LIMITS`)."""
    from .prompting import family_of

    if is_qwen25_vl(model):
        return QWEN25_IMAGE_LIMITS
    return IMAGE_LIMITS.get(family_of(model), DEFAULT_IMAGE_LIMITS)


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
        structured_output: Send the answer schema as the provider's structured output
            (``response_format`` with a JSON schema) rather than in the prompt. ``None`` (the default): where
            litellm reports that the model supports it, falling back to the prompt for good if the provider
            refuses it. ``True`` / ``False`` force one path.
        sleep: The sleep function (tests pass one that records instead of waiting).

    Requests ask for ``temperature=0``. A model that refuses it (OpenAI's o-series and reasoning gpt-5
    models, in litellm or at the provider) is asked without it from then on, with one
    :class:`~..errors.PageIndexWarning`; so is a provider that refuses an automatic ``response_format``.

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
        structured_output: bool | None = None,
        image_limits: ImageLimits | None = None,
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
        if structured_output not in (None, True, False):
            raise InvalidOptionError(
                f"structured_output must be True, False or None; got {structured_output!r}."
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
        from .prompting import family_of, marks_prompt_cache, supports_response_schema

        self.family = family_of(self.model)
        self.cache_marker = self.family == "anthropic" and marks_prompt_cache(self.model)
        if image_limits is not None and not isinstance(image_limits, ImageLimits):
            raise InvalidOptionError(f"image_limits must be an ImageLimits; got {image_limits!r}.")
        self.image_limits = image_limits or default_image_limits(self.model)
        #: What was asked for (``None``: automatic); ``structured_output`` is the path now taken.
        self.structured_output_option = structured_output
        self.structured_output = (
            supports_response_schema(self.model) if structured_output is None else structured_output
        )
        self.send_temperature = True  # until the model refuses temperature=0
        self._refusals = threading.Lock()  # page threads may meet the same refusal at once: one warning
        self.bbox_scale = bbox_scale or default_bbox_scale(self.model)
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

    def request(
        self, messages: Sequence[dict[str, Any]], response_model: type[BaseModel]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The messages and extra arguments sent for ``messages`` (system first) and ``response_model``.

        The system message is the request's fixed prefix: the instructions, then the compact schema when
        the prompt carries it (models without structured output). With structured output the schema goes
        in ``response_format`` instead. For Anthropic models the prefix is marked for prompt caching.
        """
        from .prompting import response_format, schema_instruction

        messages = [dict(message) for message in messages]
        extra: dict[str, Any] = {}
        if self.structured_output:
            extra["response_format"] = response_format(response_model)
        if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
            prefix = messages[0]["content"]
            if not self.structured_output:
                prefix = f"{prefix}\n\n{schema_instruction(response_model)}"
            if self.cache_marker:
                messages[0]["content"] = [
                    {"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}}
                ]
            else:
                messages[0]["content"] = prefix
        elif not self.structured_output:
            messages.insert(0, {"role": "system", "content": schema_instruction(response_model)})
        return messages, extra

    def _complete(self, messages: list[dict[str, Any]], timeout: float, extra: dict[str, Any]) -> Any:
        import litellm

        router = getattr(self.llm, "router", None)
        completion = router.completion if router is not None else litellm.completion
        if self.send_temperature:
            extra = {"temperature": 0, **extra}
        return completion(
            model=self.model,
            messages=messages,
            timeout=timeout,
            num_retries=0,  # HTTP-level retries are this client's, with backoff
            **extra,
        )

    def _arguments(
        self, messages: Sequence[dict[str, Any]], response_model: type[BaseModel], max_tokens: int | None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        conversation, extra = self.request(messages, response_model)
        if self.api_base:
            extra["api_base"] = self.api_base
        if self.api_key:
            extra["api_key"] = self.api_key
        if max_tokens:
            extra["max_tokens"] = max_tokens
        return conversation, extra

    def _give_up(self, parameter: str, exc: BaseException, what: str) -> None:
        """Stop sending ``parameter``, which the model refused, and say so once; or raise when it was asked
        for explicitly (``structured_output=True``)."""
        if parameter == "response_format" and self.structured_output_option:
            raise LLMExtractionError(
                f"The model could not extract {what}: the provider refused structured output "
                f"(response_format), which structured_output=True asks for; pass structured_output=None "
                f"or False to send the schema in the prompt. {type(exc).__name__}: {exc}"
            ) from exc
        attribute, said = _REFUSALS[parameter]
        with self._refusals:
            first = getattr(self, attribute)
            setattr(self, attribute, False)
        if first:
            warnings.warn(f"{self.model} refused {said}.", PageIndexWarning, stacklevel=4)

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
            messages: OpenAI-style chat messages; the system message (first) is the fixed prefix.
            response_model: The Contract the answer must validate against.
            what: What is asked, for error messages ("page 3").
            deadline: A ``time.monotonic()`` value after which no new attempt starts.
            max_tokens: Limit on the answer's tokens.

        Raises:
            LLMExtractionError: every attempt failed, the answer stayed invalid, or the error cannot be
                retried (authentication, a bad request); the message says which and why.
        """
        conversation, extra = self._arguments(messages, response_model, max_tokens)
        reason = "no attempt was made"
        attempt = 0  # calls that failed in transport (429, 5xx, timeouts)
        answers = 0  # answers received that did not validate
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                if attempt + answers == 0:
                    raise LLMExtractionError(f"The model could not extract {what}: no time was left to ask.")
                raise LLMExtractionError(
                    f"The model could not extract {what}: the time allowed ran out after "
                    f"{attempt + answers} attempt(s); last: {reason}."
                )
            timeout = self.timeout
            if deadline is not None:
                timeout = max(1.0, min(timeout, deadline - time.monotonic()))
            sent = ["temperature"] if self.send_temperature else []
            if "response_format" in extra:
                sent.append("response_format")
            try:
                response = self._complete(conversation, timeout, extra)
            except Exception as exc:
                refused, before_sending = _refused_parameter(exc, sent)
                if refused is not None:
                    if not before_sending:
                        self.usage.add(calls=1)
                    self._give_up(refused, exc, what)
                    if refused == "response_format":
                        conversation, extra = self._arguments(messages, response_model, max_tokens)
                    continue  # asked again at once, without it: no attempt is spent
                self.usage.add(calls=1)
                attempt += 1
                kind, retry_after, reason = _classify(exc)
                if kind == "transient" and attempt < self.attempts:
                    delay = self._delay(attempt, retry_after)
                    if deadline is not None:
                        delay = min(delay, max(0.0, deadline - time.monotonic()))  # never sleep past it
                    self.sleep(delay)
                    continue
                if kind == "transient":
                    raise LLMExtractionError(
                        f"The model could not extract {what}: {reason} ({self.attempts} attempts)."
                    ) from exc
                raise LLMExtractionError(f"The model could not extract {what}: {reason}.") from exc
            usage = getattr(response, "usage", None)
            self.usage.add(
                calls=1,
                input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            )
            text, finish = _answer_text(response)
            if finish == "length":
                # Asking again gets the same cut; the caller must allow longer answers or send less.
                raise LLMExtractionError(
                    f"The model could not extract {what}: the answer was cut off by the model's output "
                    "token limit."
                )
            try:
                return response_model.model_validate_json(_json_text(text, set(response_model.model_fields)))
            except (ValidationError, ValueError) as exc:
                answers += 1
                reason = "the answer did not match the expected schema"
                if answers > self.repairs:
                    raise LLMExtractionError(
                        f"The model could not extract {what}: {reason} after {answers} answer(s)."
                    ) from exc
                conversation = [
                    *conversation,
                    {"role": "assistant", "content": text or ""},
                    {"role": "user", "content": _repair_request(exc)},
                ]


def _answer_text(response: Any) -> tuple[str, str | None]:
    """The text of a chat completion's first choice, and why it finished."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return "", None
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    return (content if isinstance(content, str) else ""), getattr(choices[0], "finish_reason", None)


# Per optional parameter a model may refuse: the client's switch that stops sending it, and what the
# warning says.
_REFUSALS = {
    "temperature": (
        "send_temperature",
        "temperature=0; its answers are sampled at the model's default temperature",
    ),
    "response_format": (
        "structured_output",
        "structured output (response_format); the answer schema now goes in the prompt",
    ),
}

# Words with which providers refuse a parameter ("Unsupported value: 'temperature' does not support 0",
# "'response_format' of type 'json_schema' is not supported with this model", "Extra inputs are not
# permitted"), for errors that do not name the parameter in a field of their own.
_REFUSAL_WORDS = ("unsupported", "not support", "only the default", "not allowed", "not permitted",
                  "invalid parameter", "unrecognized", "unknown parameter", "not available")  # fmt: skip


def _refused_parameter(exc: BaseException, sent: Sequence[str]) -> tuple[str | None, bool]:
    """Which of the optional parameters ``sent`` the model refused, if that is what ``exc`` says, and
    whether litellm refused it before sending anything.

    litellm refuses some parameters itself (``UnsupportedParamsError``: temperature=0 for OpenAI's reasoning
    models). A provider answers 400 or 422: OpenAI and Azure name the parameter in the error's ``param``;
    otherwise the message must name it and say it is refused. Errors about the context, the content or an
    image are never refusals, whatever they quote.
    """
    import litellm

    for item in _chain(exc):
        if isinstance(
            item,
            (
                litellm.ContextWindowExceededError,
                litellm.ContentPolicyViolationError,
                litellm.ImageFetchError,
            ),
        ):
            return None, False
        before_sending = isinstance(item, litellm.UnsupportedParamsError)
        refusal = before_sending or isinstance(item, litellm.BadRequestError)
        if not refusal and getattr(item, "status_code", None) not in (400, 422):
            continue
        param = getattr(item, "param", None)
        if isinstance(param, str) and param:
            named = param.split(".")[0]
            return (named, before_sending) if named in sent else (None, False)
        message = str(item).lower()
        if before_sending or any(word in message for word in _REFUSAL_WORDS):
            for name in sent:
                if name in message or (name == "response_format" and "json_schema" in message):
                    return name, before_sending
    return None, False


# How many top-level objects of an answer are looked at (a model that repeats itself may write thousands).
_MOST_OBJECTS = 8


def _json_text(text: str, fields: frozenset[str] | set[str] = frozenset()) -> str:
    """The JSON object in an answer (models wrap JSON in prose and fences, and some add prose after it).

    The answer's top-level objects are read in order; the one that holds some of ``fields`` (the answer
    model's fields) is the answer. An object that does not decode ends the search, so nothing nested inside
    a broken answer is taken for it. When no object, or more than one, holds the fields, the text from the
    first "{" to the last "}" is returned, and validation names what is wrong (a repair follows).
    """
    stripped = text.strip()
    decoder = json.JSONDecoder()
    found: list[str] = []
    start = stripped.find("{")
    for _ in range(_MOST_OBJECTS):
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(stripped, start)
        except (ValueError, RecursionError):  # broken, or nested past the decoder's depth
            break
        if isinstance(value, dict) and (not fields or fields & value.keys()):
            found.append(stripped[start:end])
        start = stripped.find("{", end)
    if len(found) == 1:
        return found[0]
    start, end = stripped.find("{"), stripped.rfind("}")
    return stripped[start : end + 1] if 0 <= start < end else stripped


def _repair_request(exc: Exception) -> str:
    """What the model is told when its answer did not validate: the first errors, briefly."""
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'answer'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
    else:
        problems = str(exc)[:300]
    return (
        f"Correct your JSON: that answer is not valid ({problems}). Answer again with the whole corrected "
        "JSON object only, following the schema."
    )


def as_model_client(model: Any) -> ModelClient:
    """A ``ModelClient`` from what users pass as ``model=``: a client, an ExtractThinker LLM or a name."""
    return model if isinstance(model, ModelClient) else ModelClient(model)

"""Any OpenAI-compatible chat-completions endpoint, streamed, with tool calling.

Uses the official `openai` package. Tool-call fragments are assembled by `index` the
way the API streams them (id and name first, arguments in pieces). Every failure —
HTTP status, timeout, connection, a stream that breaks off — becomes an `LLMError`
with a stable code; retries are left to the user (the Retry button), not hidden here —
except a 429 that says when to come back (`Retry-After` / `retry-after-ms`): nothing has
streamed yet, so the call is made again after that wait, while the waits add up to at
most `rate_limit_wait` seconds.
"""

from __future__ import annotations

import contextlib
import email.utils
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import openai

from chat.agent.events import ToolCall
from questionnaires.protocol.jsontypes import JsonValue

from .base import Completion, LLMError, Usage, usage_estimate


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _error(exc: Exception, *, streaming: bool) -> LLMError:
    if isinstance(exc, httpx.TimeoutException):  # a read timeout inside the stream
        return LLMError("llm_timeout", "The model stopped answering mid-stream.")
    if streaming and not isinstance(exc, openai.APIStatusError | openai.APITimeoutError):
        return LLMError("llm_stream_broken", f"The model stream broke off: {exc}")
    if isinstance(exc, openai.APITimeoutError):
        return LLMError("llm_timeout", "The model did not answer in time.")
    if isinstance(exc, openai.RateLimitError):
        return LLMError("llm_rate_limited", "The model endpoint is rate limiting (HTTP 429).")
    if isinstance(exc, openai.APIStatusError):
        return LLMError(
            "llm_http_error", f"The model endpoint answered HTTP {exc.status_code}: {exc.message}"
        )
    if isinstance(exc, openai.APIConnectionError):
        return LLMError("llm_unreachable", f"The model endpoint is unreachable: {exc}")
    return LLMError("llm_stream_broken", f"The model stream broke off: {type(exc).__name__}")


class OpenAIClient:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float = 60.0,
        stream_usage: bool = True,
        rate_limit_wait: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not model:
            raise LLMError("llm_not_configured", "LLM_MODEL is not set.")
        self.model = model
        self.client = openai.OpenAI(
            base_url=base_url or None,
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=0,
        )
        self.stream_usage = stream_usage
        self.rate_limit_wait = rate_limit_wait
        self.sleep = sleep

    def _create(self, kwargs: dict[str, object]) -> Any:
        """The streaming call, made again after a 429's asked-for wait while the waits
        fit in `rate_limit_wait`."""
        waited = 0.0
        while True:
            try:
                return self.client.chat.completions.create(**kwargs)  # type: ignore[call-overload]
            except openai.RateLimitError as exc:
                wait = retry_after(exc.response.headers)
                if wait is None or waited + wait > self.rate_limit_wait:
                    raise
                self.sleep(wait)
                waited += wait

    def stream(
        self, messages: Sequence[dict[str, JsonValue]], tools: Sequence[dict[str, JsonValue]]
    ) -> Iterator[str | Completion]:
        # The SDK types every message shape; ours are JSON objects of those shapes.
        kwargs: dict[str, object] = {
            "model": self.model,
            "messages": list(messages),
            "stream": True,
        }
        if tools:
            kwargs["tools"] = list(tools)
        if self.stream_usage:  # the last chunk then carries `usage` (and no choices)
            kwargs["stream_options"] = {"include_usage": True}
        text: list[str] = []
        usage: Usage | None = None
        calls: dict[int, _PartialCall] = {}
        finish = ""
        streaming = False
        try:
            response = self._create(kwargs)
            streaming = True
            for chunk in response:
                reported = getattr(chunk, "usage", None)
                if reported is not None:
                    usage = Usage(
                        int(getattr(reported, "prompt_tokens", 0) or 0),
                        int(getattr(reported, "completion_tokens", 0) or 0),
                    )
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        yield delta.content
                    for fragment in (delta.tool_calls if delta is not None else None) or []:
                        _merge(calls.setdefault(fragment.index, _PartialCall()), fragment)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except LLMError:
            raise
        except Exception as exc:  # openai errors, httpx stream errors, bad JSON chunks
            raise _error(exc, streaming=streaming) from exc
        if not finish:  # the connection closed before the model finished its turn
            raise LLMError("llm_stream_broken", "The model stream ended before it finished.")
        tool_calls = tuple(
            ToolCall(id=p.id or f"call_{i}", name=p.name, arguments="".join(p.arguments))
            for i, p in sorted(calls.items())
        )
        content = "".join(text)
        if usage is None:  # the endpoint reported none: estimated, and marked so
            usage = usage_estimate(messages, tools, content, tool_calls)
        yield Completion(content, tool_calls, finish, usage)


def retry_after(headers: httpx.Headers | Mapping[str, str]) -> float | None:
    """The wait a 429 asks for, in seconds: `retry-after-ms`, else `Retry-After` as
    seconds or an HTTP date; None when it names none (or nonsense)."""
    millis = headers.get("retry-after-ms")
    if millis:
        with contextlib.suppress(ValueError):
            value = float(millis) / 1000
            return value if 0 <= value < float("inf") else None
    raw = (headers.get("retry-after") or "").strip()
    if not raw:
        return None
    if raw.isdigit():
        return float(raw)
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _merge(partial: _PartialCall, fragment: Any) -> None:
    if fragment.id:
        partial.id = fragment.id
    function = fragment.function
    if function is not None:
        if function.name and not partial.name:
            partial.name = function.name
        if function.arguments:
            partial.arguments.append(function.arguments)

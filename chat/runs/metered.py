"""Every model call of a run, measured: its time, outcome and tokens (metrics), its span
(traces) and its usage row (chat.core.usage, which budgets and admin read).

Wraps the backend below the durable-turn replay (a replayed step calls no model, so it
counts nothing); a model call made again by a resumed attempt counts again: it was paid
for again. A call that ends without its completion still took its prompt — stopped
(Stop), broken off mid-stream, timed out, or ended without finishing — so it records
its prompt and the text streamed so far, estimated (a stream reports usage only at its
end). Only a call the endpoint refused before reading it (unreachable, an HTTP error, its
own rate limit) counts nothing: no model ran.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence

from opentelemetry.trace import Span, StatusCode

from chat.agent.llm.base import Completion, LLMClient, LLMError, Usage, usage_estimate
from chat.core.models import Run
from chat.core.usage import usage_record
from chat.obs import metrics, tracing
from questionnaires.protocol.jsontypes import JsonValue

logger = logging.getLogger(__name__)

# Failures where the endpoint never ran the model on the prompt (nothing was paid for).
UNREAD = frozenset({"llm_unreachable", "llm_http_error", "llm_rate_limited", "llm_not_configured"})


class MeteredClient:
    def __init__(self, inner: LLMClient, *, run: Run, model: str, system: str) -> None:
        self.inner = inner
        self.run = run
        self.model = model or "unknown"
        self.system = system

    def stream(
        self, messages: Sequence[dict[str, JsonValue]], tools: Sequence[dict[str, JsonValue]]
    ) -> Iterator[str | Completion]:
        span = tracing.span_start(
            "chat.model_call",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.system": self.system,
                "gen_ai.request.model": self.model,
                "chat.run_id": self.run.pk,
            },
        )
        started = time.perf_counter()
        outcome = "error"
        completion: Completion | None = None
        streamed: list[str] = []
        unread = False
        try:
            with tracing.within(span):
                chunks = iter(self.inner.stream(messages, tools))
            while True:
                with tracing.within(span):  # the backend's HTTP spans nest under this one
                    chunk = next(chunks, None)
                if chunk is None:
                    break
                if isinstance(chunk, Completion):
                    completion = chunk
                else:
                    streamed.append(chunk)
                yield chunk
            outcome = "ok"
        except GeneratorExit:  # the turn stopped reading (Stop): not the model's failure
            outcome = "stopped"
            raise
        except LLMError as exc:
            span.set_attribute("error.type", exc.code)
            unread = exc.code in UNREAD and not streamed
            raise
        finally:
            seconds = time.perf_counter() - started
            metrics.MODEL_CALLS.labels(self.model, outcome).inc()
            metrics.MODEL_CALL_SECONDS.labels(self.model).observe(seconds)
            if completion is not None and completion.usage is not None:
                self._usage(completion.usage, span)
            elif not unread and (outcome != "stopped" or self._run_still_there()):
                # stopped, broken off: the prompt was read all the same
                self._usage(usage_estimate(messages, tools, "".join(streamed)), span)
            if outcome == "error":
                span.set_status(StatusCode.ERROR)
            span.end()

    def _run_still_there(self) -> bool:
        """A call the turn stopped reading is closed with its generator, which may be
        collected long after (a superseded attempt, a deleted chat): its run must still
        exist to be charged, else the row would point at nothing."""
        return Run.objects.filter(pk=self.run.pk).exists()

    def _usage(self, usage: Usage, span: Span) -> None:
        span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
        span.set_attribute("chat.usage.estimated", usage.estimated)
        metrics.MODEL_TOKENS.labels(self.model, "in").inc(usage.prompt_tokens)
        metrics.MODEL_TOKENS.labels(self.model, "out").inc(usage.completion_tokens)
        if usage.estimated:
            metrics.MODEL_TOKENS_ESTIMATED.labels(self.model, "in").inc(usage.prompt_tokens)
            metrics.MODEL_TOKENS_ESTIMATED.labels(self.model, "out").inc(usage.completion_tokens)
        usage_record(
            user_id=self.run.conversation.owner_id,
            conversation_id=self.run.conversation_id,
            run_id=self.run.pk,
            model=self.model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            estimated=usage.estimated,
        )

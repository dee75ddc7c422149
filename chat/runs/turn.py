"""The Django side of a turn: context in, loop events out to the database and the stream.

`scripted_turn` and `openai_turn` are registered in `runner.AGENTS`. Each builds the
model context, drives `loop.run_loop` and hands every event to a `RunSink`, which
persists messages (tool calls in OpenAI format on the assistant message, each result
as a `tool` message with the JSON result) and emits `text_delta`, `tool_call` and
`tool_result` events. An error stop raises `RunFailed`; the runner records it.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from chat.agent.context import context_messages
from chat.agent.events import (
    AgentEvent,
    AssistantMessage,
    IterationStarted,
    RunStopped,
    SelfCheckFailed,
    Stop,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from chat.agent.llm.base import LLMClient, LLMError
from chat.agent.llm.openai_client import OpenAIClient
from chat.agent.llm.scripted import SCRIPTS_DIR, ScriptedClient, script_load
from chat.agent.loop import LoopConfig, run_loop
from chat.agent.steps import step_persist
from chat.agent.tools import TOOLS
from chat.core.identity import run_environment
from chat.core.models import Role, Run, StopReason
from chat.core.services import event_emit, message_create

# Streamed text is batched into one `text_delta` event per this many seconds (the first
# fragment of a model call goes out at once, so the typing indicator appears at once).
DELTA_FLUSH_SECONDS = 0.05
CANCEL_POLL_SECONDS = 0.2


class RunFailed(Exception):
    """A turn function's expected failure: a stable `code` and a human `message`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def echo_turn(run: Run) -> str:
    """The placeholder agent: repeats the user's message."""
    text = run.trigger_message.content if run.trigger_message else ""
    message_create(
        conversation=run.conversation, role=Role.ASSISTANT, content=f"Echo: {text}", run=run
    )
    return StopReason.COMPLETED


class RunSink:
    """Persists and streams the loop's events for one run."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.conversation_id = run.conversation_id
        self.buffer: list[str] = []
        self.iteration = 0
        self.last_flush = 0.0
        self.last_poll = 0.0
        self.was_cancelled = False

    def cancelled(self) -> bool:
        now = time.monotonic()
        if not self.was_cancelled and now - self.last_poll >= CANCEL_POLL_SECONDS:
            self.last_poll = now
            self.was_cancelled = Run.objects.filter(pk=self.run.pk, cancel_requested=True).exists()
        return self.was_cancelled

    def emit(self, name: str, data: dict[str, Any]) -> None:
        event_emit(
            conversation_id=self.conversation_id, name=name, data={"run_id": self.run.pk, **data}
        )

    def flush(self) -> None:
        if self.buffer:
            self.emit("text_delta", {"iteration": self.iteration, "text": "".join(self.buffer)})
            self.buffer.clear()
        self.last_flush = time.monotonic()

    def handle(self, event: AgentEvent) -> str | None:
        """Returns the stop reason on the final event."""
        if isinstance(event, TextDelta):
            first = not self.buffer and self.last_flush == 0.0
            self.buffer.append(event.text)
            if first or time.monotonic() - self.last_flush >= DELTA_FLUSH_SECONDS:
                self.flush()
            return None
        self.flush()
        if isinstance(event, IterationStarted):
            self.iteration = event.iteration
            self.last_flush = 0.0
            Run.objects.filter(pk=self.run.pk).update(
                iterations=event.iteration, heartbeat_at=timezone.now()
            )
        elif isinstance(event, ToolCallEvent):
            self.emit(
                "tool_call",
                {
                    "tool_call_id": event.call.id,
                    "name": event.call.name,
                    "arguments": event.call.arguments,
                },
            )
        elif isinstance(event, ToolResultEvent):
            self.emit(
                "tool_result",
                {
                    "tool_call_id": event.call.id,
                    "name": event.call.name,
                    "success": event.result.get("success") is not False,
                    "result": event.result,
                },
            )
        elif isinstance(event, AssistantMessage):
            self.persist_message(event)
        elif isinstance(event, SelfCheckFailed):
            self.persist_self_check(event)
        elif isinstance(event, RunStopped):
            if event.stop_reason == Stop.ERROR:
                raise RunFailed(event.error_code, event.error_message)
            return event.stop_reason
        return None

    def persist_message(self, event: AssistantMessage) -> None:
        step_persist(
            run=self.run,
            content=event.content,
            calls=event.tool_calls,
            results=event.tool_results,
            metadata={"kind": event.kind},
        )

    @transaction.atomic
    def persist_self_check(self, event: SelfCheckFailed) -> None:
        conversation = self.run.conversation
        message_create(
            conversation=conversation,
            role=Role.ASSISTANT,
            content=event.reply,
            hidden=True,
            metadata={
                "kind": "self_check_failed",
                "attempt": event.attempt,
                "issues": list(event.issues),
            },
            run=self.run,
        )
        # A hidden *user* message: every OpenAI-compatible model accepts a user turn
        # after an assistant turn, while mid-conversation system messages are not portable.
        message_create(
            conversation=conversation,
            role=Role.USER,
            content=event.diagnostic,
            hidden=True,
            metadata={"kind": "self_check_diagnostic", "attempt": event.attempt},
            run=self.run,
        )


def turn_drive(run: Run, client: LLMClient, *, max_iterations: int | None = None) -> str:
    conversation = run.conversation
    config = LoopConfig(
        lang=conversation.language,
        max_iterations=max_iterations or settings.AGENT_MAX_ITERATIONS,
        tool_extra={
            "run_id": run.pk,
            "conversation_id": conversation.pk,
            # MCP_RUN_TOKEN, SKILL_IDENTITY_TOKEN, WEGENT_SKILL_IDENTITY_TOKEN for this run
            "env": run_environment(
                conversation_id=conversation.pk, run_id=run.pk, user_id=conversation.owner_id
            ),
        },
    )
    sink = RunSink(run)
    events = run_loop(
        client=client,
        tools=TOOLS,
        messages=context_messages(conversation=conversation),
        config=config,
        cancelled=sink.cancelled,
    )
    for event in events:
        stop = sink.handle(event)
        if stop is not None:
            return stop
    raise RunFailed("loop_ended", "The agent loop ended without a stop reason.")


def scripted_step_index(run: Run) -> int:
    """The tour advances one step per visible user message (retries replay the step)."""
    trigger = run.trigger_message
    users = run.conversation.messages.filter(role=Role.USER, hidden=False)
    if trigger is not None:
        users = users.filter(seq__lte=trigger.seq)
    return max(users.count() - 1, 0)


def script_exists(name: str) -> bool:
    return (SCRIPTS_DIR / f"{name}.en.yaml").is_file()


def scripted_script_name(run: Run) -> str:
    """The tour, unless the conversation names another script in `state["script"]`
    (e.g. "forms", the deferred-form walk-through used by tests and demos)."""
    name = (run.conversation.state or {}).get("script")
    if isinstance(name, str) and name.isidentifier() and script_exists(name):
        return name
    return "tour"


def scripted_turn(run: Run) -> str:
    script = script_load(scripted_script_name(run), run.conversation.language)
    step = script.step(scripted_step_index(run))
    client = ScriptedClient(
        step.turns,
        chunk_chars=script.chunk_chars,
        delay_seconds=script.delay_seconds,
        call_prefix=f"call_r{run.pk}",
    )
    return turn_drive(run, client, max_iterations=step.max_iterations)


def openai_turn(run: Run) -> str:

    if not settings.LLM_BASE_URL and not settings.LLM_API_KEY:
        raise RunFailed(
            "llm_not_configured",
            "No model endpoint is configured (set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL).",
        )
    try:
        client = OpenAIClient(
            base_url=settings.LLM_BASE_URL,
            api_key=settings.LLM_API_KEY,
            model=settings.LLM_MODEL,
            timeout=settings.LLM_TIMEOUT_SECONDS,
        )
    except LLMError as exc:
        raise RunFailed(exc.code, exc.message) from exc
    return turn_drive(run, client)

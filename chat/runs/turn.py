"""The Django side of a turn: context in, loop events out to the database and the stream.

`scripted_turn` and `openai_turn` are agents' turns (chat.runs.agents). Each builds the
model context, drives `loop.run_loop` and hands every event to a `RunSink`, which
persists messages (tool calls in OpenAI format on the assistant message, each result
as a `tool` message with the JSON result) and emits `text_delta`, `tool_call` and
`tool_result` events. An error stop raises `RunFailed`; the runner records it.

Turns are durable: the sink journals each step in `Run.checkpoint` as it goes, and a
later attempt of the same run (its worker died) resumes from there — see `resume.py`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
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
    ToolStepStarted,
)
from chat.agent.llm.base import LLMClient, LLMError
from chat.agent.llm.openai_client import OpenAIClient
from chat.agent.llm.scripted import SCRIPTS_DIR, ScriptedClient, script_load
from chat.agent.loop import LoopConfig, run_loop
from chat.agent.steps import step_message_open, step_persist
from chat.agent.tools import TOOLS, TOOLS_BY_NAME, Tool
from chat.core.identity import run_environment
from chat.core.metadata import ScriptOrigin, state_of
from chat.core.models import Conversation, Event, Message, Role, Run
from chat.core.selectors import question_budget_limits
from chat.core.services import event_emit, message_create
from chat.core.stream_events import EventName
from chat.mcphost.tools import Note, mcp_tools
from chat.obs import metrics
from chat.runs.errors import RunFailed
from chat.runs.metered import MeteredClient
from chat.runs.resume import (
    AttemptSuperseded,
    DeltaMerger,
    Journal,
    ReplayClient,
    Resume,
    journaled_tools,
    resume_load,
    stop_json,
)
from questionnaires import registry
from questionnaires.protocol.budget import QuestionBudget, budget_prompt
from questionnaires.registry import questions_asked

# Streamed text is batched into one `text_delta` event per this many seconds (the first
# fragment of a model call goes out at once, so the typing indicator appears at once).
DELTA_FLUSH_SECONDS = 0.05
# The offline tour's "model" in usage rows and metrics (its tokens are estimates).
SCRIPTED_MODEL = "scripted"
CANCEL_POLL_SECONDS = 0.2


class RunSink:
    """Persists and streams the loop's events for one attempt of a run."""

    def __init__(
        self, run: Run, resume: Resume | None = None, tools: Mapping[str, Tool] | None = None
    ) -> None:
        self.run = run
        self.conversation_id = run.conversation_id
        self.resume = resume or Resume(attempt=run.attempts)
        self.tools = TOOLS_BY_NAME if tools is None else tools
        self.journal = Journal(run, self.resume.attempt)
        self.merger = DeltaMerger(self.resume.state.iteration + 1, self.resume.streamed)
        self.buffer: list[str] = []
        self.replace = False
        self.iteration = 0
        self.last_flush = 0.0
        self.last_poll = 0.0
        self.was_cancelled = False

    def cancelled(self) -> bool:
        now = time.monotonic()
        if not self.was_cancelled and now - self.last_poll >= CANCEL_POLL_SECONDS:
            self.last_poll = now
            row = Run.objects.filter(pk=self.run.pk).values_list("cancel_requested", "attempts")
            cancel_requested, attempts = row.get()
            if attempts != self.resume.attempt and self.resume.attempt:
                raise AttemptSuperseded(f"run {self.run.pk} was taken over")
            self.was_cancelled = cancel_requested
        return self.was_cancelled

    def emit(self, name: EventName, data: dict[str, Any]) -> None:
        event_emit(
            conversation_id=self.conversation_id, name=name, data={"run_id": self.run.pk, **data}
        )

    def flush(self) -> None:
        if self.buffer or self.replace:
            data: dict[str, Any] = {"iteration": self.iteration, "text": "".join(self.buffer)}
            if self.replace:  # a resumed call's text differs from what was streamed
                data["replace"] = True
            self.emit("text_delta", data)
            self.buffer.clear()
            self.replace = False
        self.last_flush = time.monotonic()

    def text(self, event: TextDelta) -> None:
        text, replace = self.merger.feed(event.iteration, event.text)
        if replace:
            self.buffer.clear()
            self.replace = True
        elif not text:
            return
        first = not self.buffer and self.last_flush == 0.0
        self.buffer.append(text)
        if first or replace or time.monotonic() - self.last_flush >= DELTA_FLUSH_SECONDS:
            self.flush()

    def handle(self, event: AgentEvent) -> str | None:
        """Returns the stop reason on the final event."""
        if isinstance(event, TextDelta):
            self.text(event)
            return None
        if not isinstance(event, IterationStarted) and self.iteration == self.merger.iteration:
            closing = self.merger.close()
            if closing is not None:
                self.buffer[:] = [closing[0]]
                self.replace = closing[1]
        self.flush()
        if isinstance(event, IterationStarted):
            self.iteration = event.iteration
            self.last_flush = 0.0
            # (Fenced like every write: a replaced attempt must not look alive.)
            Run.objects.filter(pk=self.run.pk, attempts=self.resume.attempt).update(
                iterations=event.iteration, heartbeat_at=timezone.now()
            )
        elif isinstance(event, ToolStepStarted):
            self.journal.step_started(event)
            self.step_open(event)
        elif isinstance(event, ToolCallEvent):
            self.tool_call(event)
        elif isinstance(event, ToolResultEvent):
            self.tool_result(event)
        elif isinstance(event, AssistantMessage):
            self.persist_message(event)
        elif isinstance(event, SelfCheckFailed):
            self.persist_self_check(event)
        elif isinstance(event, RunStopped):
            if event.stop_reason == Stop.ERROR:
                raise RunFailed(event.error_code, event.error_message)
            return event.stop_reason
        return None

    @transaction.atomic
    def step_open(self, event: ToolStepStarted) -> None:
        """A step that calls an MCP tool stores its message before the tools run: the
        text that introduces a server's question appears before the question's card
        (and stays, however long the run is suspended on it)."""
        step = self.journal.doc.get("step") or {}
        resumable = any(
            (tool := self.tools.get(c.name)) is not None and tool.resumable
            for c in event.tool_calls
        )
        if not resumable or step.get("message_id"):
            return
        message = step_message_open(run=self.run, content=event.content, calls=event.tool_calls)
        step["message_id"] = message.pk
        self.journal.write()

    def note(self, note: Note) -> None:
        """An MCP server skipped for this turn, shown once per outage and conversation
        like a failed tool call (the model is told in its context)."""
        call_id = f"mcp_list_{note.server}_{note.since or self.resume.attempt}"
        if Event.objects.filter(
            conversation_id=self.conversation_id, name="tool_call", data__tool_call_id=call_id
        ).exists():
            return
        name = f"{note.server}__*"
        self.emit("tool_call", {"tool_call_id": call_id, "name": name, "arguments": "{}"})
        result = {
            "success": False,
            "status": "error",
            "error_code": note.code,
            "message": f"{note.message} Its tools are not offered in this turn.",
        }
        self.emit(
            "tool_result",
            {"tool_call_id": call_id, "name": name, "success": False, "result": result},
        )

    def tool_call(self, event: ToolCallEvent) -> None:
        call = event.call
        tool = self.tools.get(call.name)
        if call.id not in self.resume.announced:
            label = tool.label if tool is not None else call.name
            self.emit(
                "tool_call",
                {
                    "tool_call_id": call.id,
                    "name": call.name,
                    "label": label,
                    "arguments": call.arguments,
                },
            )
        if tool is not None and not tool.idempotent:
            self.journal.call_started(call.id)  # committed before the tool runs

    @transaction.atomic
    def tool_result(self, event: ToolResultEvent) -> None:
        call = event.call
        stop = event.stop
        self.journal.call_finished(
            call.id,
            event.result,
            stop_json(stop.stop_reason, stop.error_code, stop.error_message) if stop else None,
        )
        if call.id not in self.resume.reported:
            self.emit(
                "tool_result",
                {
                    "tool_call_id": call.id,
                    "name": call.name,
                    "success": event.result.get("success") is not False,
                    "result": event.result,
                },
            )

    @transaction.atomic
    def persist_message(self, event: AssistantMessage) -> None:
        # One transaction: open tabs fetch the assistant message together with its tool
        # results, so a questionnaire_async card is complete when it first appears. The
        # checkpoint goes with it: the step (and, with `stop`, the turn) is done.
        stop = event.stop
        opened = (self.journal.doc.get("step") or {}).get("message_id")
        self.journal.step_stored(
            event.state,
            stop_json(stop.stop_reason, stop.error_code, stop.error_message) if stop else None,
        )
        if event.kind == "self_check_gave_up":
            agent = self.run.conversation.agent
            metrics.on_commit(lambda: metrics.SELF_CHECK.labels(agent, "gave_up").inc())
        message = step_persist(
            run=self.run,
            content=event.content,
            calls=event.tool_calls,
            results=event.tool_results,
            metadata={"kind": event.kind},
            opened=opened if event.tool_calls else None,
        )
        if event.kind == "stopped":
            # Half a reply: a questionnaire in it is shown but never answerable.
            Message.objects.filter(pk=message.pk).update(readonly=True)
        if stop is not None and stop.stop_reason == Stop.AWAITING_USER_INPUT:
            # The turn ends on a card: the person's answer starts the next (its kind
            # records the wait, unless a tool of the turn recorded its own).
            tool_names = [c.name for c in event.tool_calls]
            registry.turn_awaits(run=self.run, message=message, tool_names=tool_names)

    @transaction.atomic
    def persist_self_check(self, event: SelfCheckFailed) -> None:
        agent = self.run.conversation.agent
        metrics.on_commit(lambda: metrics.SELF_CHECK.labels(agent, "repair").inc())
        opened = (self.journal.doc.get("step") or {}).get("message_id")
        if opened:  # the step is repaired: its early message is superseded
            Message.objects.filter(pk=opened).update(hidden=True)
        self.journal.step_stored(event.state)
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


def turn_budget(conversation: Conversation, override: QuestionBudget | None) -> QuestionBudget:
    """The question budget of this turn (issue 27): the agent's (admin, else settings), or
    a scripted step's own, with the questions the conversation asked so far."""
    if override is None:
        per_turn, per_conversation, one_card = question_budget_limits(agent=conversation.agent)
        override = QuestionBudget(
            per_turn=per_turn, per_conversation=per_conversation, one_card=one_card
        )
    if not override.limited:
        return override
    return replace(override, asked=questions_asked(conversation=conversation))


def turn_drive(
    run: Run,
    make_client: Callable[[int], LLMClient],
    *,
    model: str,
    system: str,
    max_iterations: int | None = None,
    budget: QuestionBudget | None = None,
) -> str:
    """Drive the loop for one attempt of `run`. `make_client(n)` builds the model backend
    for a turn whose first `n` model calls are already done (a resumed attempt); every
    call it makes is measured as `model` of `system` (chat.runs.metered)."""
    conversation = run.conversation
    limits = turn_budget(conversation, budget)
    resume = resume_load(run)
    client: LLMClient = MeteredClient(
        make_client(resume.calls_made), run=run, model=model, system=system
    )
    replay = resume.replay()
    if replay is not None:
        client = ReplayClient(replay, client)
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
        start=resume.state,
        budget=limits if limits.limited else None,
    )
    # Admin-registered MCP servers' tools (`SERVER__TOOL`) next to the built-in ones (and
    # those of the step being replayed, whatever the listing says now).
    replayed = [c["function"]["name"] for c in (resume.step or {}).get("tool_calls", [])]
    listing = mcp_tools(conversation.agent, resuming=replayed)
    tools = TOOLS + listing.tools
    sink = RunSink(run, resume, {tool.name: tool for tool in tools})
    for note in listing.notes:
        sink.note(note)
    messages = context_messages(conversation=conversation)
    budget_note = budget_prompt(limits, conversation.language)
    if budget_note:  # the model learns its budget before it asks
        messages.insert(1, {"role": "system", "content": budget_note})
    if listing.notes:  # the model learns why some tools are missing
        lines = "\n".join(f"- {n.server}: {n.message}" for n in listing.notes)
        notice = f"These MCP servers' tools are not available in this turn:\n{lines}"
        messages.insert(1, {"role": "system", "content": notice})
    events = run_loop(
        client=client,
        tools=journaled_tools(tools, resume),
        messages=messages,
        config=config,
        cancelled=sink.cancelled,
    )
    for event in events:
        stop = sink.handle(event)
        if stop is not None:
            return stop
    raise RunFailed("loop_ended", "The agent loop ended without a stop reason.")


def scripted_step_index(run: Run) -> int:
    """The tour advances one step per visible user message (retries replay the step).

    Counted from where the script began (`origin`, see `script_origin`): a script set on a
    conversation that already went some way (the deferred-form tour chosen in admin for an
    existing tour) starts at its own first step. Without an origin (a conversation from
    before origins were kept), from the conversation's start. A script that opened by
    itself (its first run had no trigger) showed step 0 before any message: each answer is
    one step further."""
    origin = script_origin(run, scripted_script_name(run))
    trigger = run.trigger_message
    messages = run.conversation.messages
    users = messages.filter(role=Role.USER, hidden=False)
    if origin is not None:
        users = users.filter(seq__gte=origin["seq"])
        opened = origin["opened"]
    else:
        first = messages.order_by("seq").values_list("role", flat=True).first()
        opened = first is not None and first != Role.USER
    if trigger is not None:
        users = users.filter(seq__lte=trigger.seq)
    opened = opened and trigger is not None
    return max(users.count() - 1 + int(opened), 0)


def script_exists(name: str) -> bool:
    return (SCRIPTS_DIR / f"{name}.en.yaml").is_file()


def scripted_script_name(run: Run) -> str:
    """The tour, unless the conversation names another script in `state["script"]`
    (e.g. "forms", the deferred-form walk-through)."""
    name = state_of(run.conversation).get("script")
    if isinstance(name, str) and name.isidentifier() and script_exists(name):
        return name
    return "tour"


def script_origin(run: Run, name: str) -> ScriptOrigin | None:
    """Where script `name` began in this conversation, recorded by its first run.

    A conversation that never named a script plays the tour from its start (None). Once
    `state["script"]` names one (on creation, or changed later in admin), the first run
    that plays it records its origin: its trigger's seq, or the next seq for a run that
    opens by itself; a later run, or a retry, reads the same origin."""
    conversation = run.conversation
    state = state_of(conversation)
    if "script" not in state:
        return None
    origin = state.get("script_origin")
    if origin is not None and origin.get("script") == name:
        return origin
    trigger = run.trigger_message
    with transaction.atomic():
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        current = state_of(locked).get("script_origin")
        if current is not None and current.get("script") == name:
            return current
        if trigger is not None:
            seq = trigger.seq
        else:
            last = locked.messages.order_by("-seq").values_list("seq", flat=True).first()
            seq = (last or 0) + 1
        origin = ScriptOrigin(script=name, seq=seq, opened=trigger is None)
        locked.state = {**(locked.state or {}), "script_origin": origin}
        locked.save(update_fields=["state"])
    conversation.state = locked.state
    return origin


def scripted_turn(run: Run) -> str:
    name = scripted_script_name(run)
    script = script_load(name, run.conversation.language)
    step = script.step(scripted_step_index(run))

    def client(start: int) -> LLMClient:
        return ScriptedClient(
            step.turns,
            chunk_chars=script.chunk_chars,
            delay_seconds=script.delay_seconds,
            call_prefix=f"call_r{run.pk}",
            start=start,
        )

    return turn_drive(
        run,
        client,
        model=SCRIPTED_MODEL,
        system="scripted",
        max_iterations=step.max_iterations,
        budget=step.budget,
    )


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
            stream_usage=settings.LLM_STREAM_USAGE,
            rate_limit_wait=settings.LLM_RATE_LIMIT_WAIT_SECONDS,
        )
    except LLMError as exc:
        raise RunFailed(exc.code, exc.message) from exc
    # A resumed attempt asks the model again from the stored context (nothing to skip).
    return turn_drive(run, lambda _done: client, model=client.model, system="openai")

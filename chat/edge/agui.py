"""AG-UI: a conversation's agent as an AG-UI run (`POST /api/v1/conversations/{id}/agui`).

The body is an AG-UI `RunAgentInput`; the answer an AG-UI event stream (`text/event-stream`,
the official `ag-ui-protocol` models and encoder). A run is one of:

- a new user message (the last of `messages`, role `user`): posted like one typed in the
  page, and the agent's turn streams as AG-UI events (text, tool calls and results);
- `resume` entries answering the interrupts the last run ended with. The coverage rule:
  every open interrupt is answered (`resolved` with a `payload` shaped by its
  `responseSchema`) or abandoned (`cancelled`: declined or skipped) in one request, or
  nothing is (409 `interrupts_uncovered`); an expired one can only be cancelled. Each is
  answered through its kind's own answer path, as the token's person: asks, inline
  cards, deferred forms and MCP elicitations alike (each kind's `interrupts` module).
  A refused entry is the kind's own 4xx and code, `details.interrupt` naming it.

A run that needs a person ends with `RUN_FINISHED` `outcome: {type: "interrupt"}`: one
interrupt per question waiting for the person, its `id` the wait's ref (`ask:12`), with
`message`, `responseSchema`, `expiresAt` and `toolCallId` (and `metadata` where the kind
has more to say: an MCP server's name, the link it asks the person to open). Interrupts are the durable
waits (`chat.core.waits`), so they survive restarts and are the same on every replica.
Refusals before the stream starts are the API's `{"error", "message"}` with a 4xx;
after it started, a `RUN_ERROR` with the code.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core.events import RunFinishedInterruptOutcome, RunFinishedSuccessOutcome
from ag_ui.encoder import EventEncoder
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from pydantic import ValidationError

from chat import usecases
from chat.agent.tools.base import is_deferred
from chat.core import selectors
from chat.core.errors import ChatError
from chat.core.models import MCP_CALL_WAIT, Conversation, Message, Role, RunStatus, Wait
from chat.core.waits import waits_open
from chat.edge.http import bearer_token, error_response, json_body, user_for_api_token
from chat.edge.stream_selectors import EventRow, event_last_id, event_rows_after
from questionnaires.registry import Pending, RunEffect, kind_named

POLL_SECONDS = 0.1
PAGE = 200


@csrf_exempt
async def agui_run(request: HttpRequest, conversation_id: int) -> HttpResponseBase:
    if request.method != "POST":
        response = error_response(ChatError("method_not_allowed", _("Use POST."), status=405))
        response["Allow"] = "POST"
        return response
    try:
        user = await sync_to_async(_user)(request)
        run_input = _run_input(request)
        lang = request.LANGUAGE_CODE
        prepared = await sync_to_async(_prepare)(user, conversation_id, run_input, lang)
    except ChatError as error:
        return error_response(error)
    return StreamingHttpResponse(
        _stream(prepared, run_input), content_type="text/event-stream; charset=utf-8"
    )


def _user(request: HttpRequest) -> User:
    raw = bearer_token(request)
    user = user_for_api_token(raw) if raw else None
    if user is None:
        raise ChatError("unauthorized", _("A valid API token is required."), status=401)
    return user


def _run_input(request: HttpRequest) -> RunAgentInput:
    body = json_body(request)
    try:
        return RunAgentInput.model_validate(body)
    except ValidationError as exc:
        problems = [
            {"path": ".".join(str(p) for p in e["loc"]), "message": e["msg"]}
            for e in exc.errors(include_url=False)[:20]
        ]
        raise ChatError(
            "agui_input_invalid",
            _("The body is not an AG-UI RunAgentInput."),
            details={"errors": problems},
        ) from None


# --- before the stream: the message or the answers --------------------------------------


@dataclass
class Prepared:
    conversation_id: int
    cursor: int  # events after this one belong to this run
    run_id: int | None  # the run the message or answers started, if any
    # The tool results the answers gave (deferred calls: the answer is the result).
    results: list[tuple[str, str]] = field(default_factory=list)


def _prepare(user: User, conversation_id: int, run_input: RunAgentInput, lang: str) -> Prepared:
    conversation = selectors.conversation_get_for_user(user=user, conversation_id=conversation_id)
    cursor = event_last_id(conversation_id=conversation.pk)
    results: list[tuple[str, str]] = []
    if run_input.resume:
        calls = _resume(conversation, run_input.resume, user, lang)
        results = _tool_results(conversation, calls)
    else:
        text = _new_user_text(run_input)
        if text:
            usecases.message_post_user(conversation=conversation, content=text)
        elif interrupts_of(conversation):
            raise ChatError(
                "interrupts_pending",
                _("The last run is waiting: answer its interrupts with “resume”."),
                status=409,
            )
        else:
            raise ChatError(
                "agui_nothing_to_run", _("Send a user message (the last of “messages”).")
            )
    active = selectors.run_active(conversation=conversation)
    return Prepared(conversation.pk, cursor, active.pk if active else None, results)


def _new_user_text(run_input: RunAgentInput) -> str:
    """The text of the last message when it is the person's (text parts joined)."""
    if not run_input.messages:
        return ""
    last = run_input.messages[-1]
    if getattr(last, "role", "") != "user":
        return ""
    content = last.content
    if isinstance(content, str):
        return content.strip()
    parts = content if isinstance(content, list) else []
    return "\n".join(str(getattr(part, "text", "")) for part in parts).strip()


def _open_waits(conversation: Conversation) -> list[Wait]:
    return [w for w in waits_open(conversation_id=conversation.pk) if w.kind != MCP_CALL_WAIT]


def interrupts_of(conversation: Conversation) -> list[Interrupt]:
    """Every question waiting for the person in `conversation`, as AG-UI interrupts."""
    found = []
    for wait in _open_waits(conversation):
        kind = kind_named(wait.kind)
        pending = kind.pending(conversation, wait.ref) if kind.pending is not None else None
        found.append(
            Interrupt(
                id=wait.ref,
                reason=wait.kind,
                message=pending.message if pending else None,
                tool_call_id=(pending.tool_call_id if pending else "") or wait.tool_call_id or None,
                response_schema=dict(pending.response_schema) if pending else None,
                expires_at=wait.deadline.isoformat(),
                # A question a client can't answer is answered in the chat page.
                metadata=_metadata(pending),
            )
        )
    return found


def _metadata(pending: Pending | None) -> dict[str, object] | None:
    if pending is None:
        return {"answerIn": "page"}
    return dict(pending.metadata) if pending.metadata else None


def _tool_results(conversation: Conversation, calls: Sequence[str]) -> list[tuple[str, str]]:
    rows = conversation.messages.filter(role=Role.TOOL, tool_call_id__in=calls)
    found = dict(rows.values_list("tool_call_id", "content"))
    return [(call, found[call]) for call in calls if call in found]


def _resume(
    conversation: Conversation, entries: Sequence[ResumeEntry], user: User, lang: str
) -> list[str]:
    """Answer every entry (or none); the tool calls whose result an answer was (a
    deferred form's: its run stopped with the call open)."""
    waits = {w.ref: w for w in _open_waits(conversation)}
    ids = [entry.interrupt_id for entry in entries]
    if len(set(ids)) != len(ids):
        raise ChatError("interrupt_duplicate", _("Each interrupt may be answered once."))
    unknown = sorted(set(ids) - set(waits))
    if unknown:
        raise ChatError(
            "interrupt_unknown",
            _("No such question is waiting: %(ids)s.") % {"ids": ", ".join(unknown)},
            status=409,
            details={"interrupts": unknown},
        )
    missing = sorted(set(waits) - set(ids))
    if missing:
        raise ChatError(
            "interrupts_uncovered",
            _("Answer or cancel every open interrupt in one request: %(ids)s.")
            % {"ids": ", ".join(missing)},
            status=409,
            details={"interrupts": missing},
        )
    now = timezone.now()
    calls = []
    with transaction.atomic():  # all of them or none
        for entry in entries:
            wait = waits[entry.interrupt_id]
            if entry.status == "resolved" and wait.deadline <= now:
                raise ChatError(
                    "interrupt_expired",
                    _("This question expired; it can only be cancelled."),
                    status=409,
                    details={"interrupt": wait.ref},
                )
            kind = kind_named(wait.kind)
            if kind.resolve is None:
                raise ChatError(
                    "interrupt_answer_in_page",
                    _("This question is answered in the chat page."),
                    status=409,
                    details={"interrupt": wait.ref},
                )
            payload = entry.payload if entry.status == "resolved" else None
            if entry.status == "resolved" and payload is None:
                raise ChatError("interrupt_payload_invalid", _("A resolved entry needs a payload."))
            try:
                kind.resolve(
                    conversation=conversation, ref=wait.ref, payload=payload, user=user, lang=lang
                )
            except ChatError as error:  # which of the entries it was
                error.details.setdefault("interrupt", wait.ref)
                raise
            if kind.run_effect == RunEffect.DEFERS_RUN and wait.tool_call_id:
                calls.append(wait.tool_call_id)
    return calls


# --- the stream ---------------------------------------------------------------------------


@dataclass
class _Translation:
    """Our events → AG-UI events, for one run's stream."""

    text_id: str = ""  # the open text message (streamed deltas)
    runs_seen: set[int] = field(default_factory=set)
    runs_ended: set[int] = field(default_factory=set)
    error: tuple[str, str] | None = None

    def close_text(self) -> list[BaseEvent]:
        if not self.text_id:
            return []
        ended = TextMessageEndEvent(message_id=self.text_id)
        self.text_id = ""
        return [ended]

    def events(self, row: EventRow, message: Message | None) -> list[BaseEvent]:
        data: dict[str, Any] = dict(row.data)
        name = row.name
        out: list[BaseEvent] = []
        if name == "run_started":
            self.runs_seen.add(int(data["run_id"]))
        elif name == "text_delta" and data.get("text"):
            if data.get("replace"):
                out += self.close_text()
            if not self.text_id:
                self.text_id = f"run-{data['run_id']}-{row.id}"
                out.append(TextMessageStartEvent(message_id=self.text_id, role="assistant"))
            out.append(TextMessageContentEvent(message_id=self.text_id, delta=str(data["text"])))
        elif name == "message_done" and data.get("role") == "assistant":
            if self.text_id:
                out += self.close_text()
            elif message is not None and (message.display_content or message.content).strip():
                text_id = f"message-{message.pk}"
                out += [
                    TextMessageStartEvent(message_id=text_id, role="assistant"),
                    TextMessageContentEvent(
                        message_id=text_id, delta=message.display_content or message.content
                    ),
                    TextMessageEndEvent(message_id=text_id),
                ]
        elif name == "tool_call":
            call = str(data["tool_call_id"])
            out += self.close_text()
            out.append(ToolCallStartEvent(tool_call_id=call, tool_call_name=str(data["name"])))
            arguments = str(data.get("arguments") or "")
            if arguments:
                out.append(ToolCallArgsEvent(tool_call_id=call, delta=arguments))
            out.append(ToolCallEndEvent(tool_call_id=call))
        elif name == "tool_result" and not _deferred(data.get("result")):
            # (a deferred call's result is the person's answer: sent when it is given)
            call = str(data["tool_call_id"])
            out.append(_tool_result(call, json.dumps(data.get("result"), ensure_ascii=False)))
        elif name == "error":
            self.error = (str(data.get("code", "run_failed")), str(data.get("message", "")))
        elif name in ("run_finished", "run_suspended"):
            out += self.close_text()
            self.runs_ended.add(int(data["run_id"]))
            if name == "run_finished" and data.get("status") != RunStatus.FAILED:
                self.error = None
        return out


def _deferred(result: object) -> bool:
    return isinstance(result, dict) and is_deferred(result)


def _tool_result(call: str, content: str) -> ToolCallResultEvent:
    return ToolCallResultEvent(
        message_id=f"tool-{call}", tool_call_id=call, content=content, role="tool"
    )


def _rows(conversation_id: int, cursor: int) -> tuple[list[EventRow], dict[int, Message]]:
    rows = event_rows_after(conversation_id=conversation_id, after_id=cursor, limit=PAGE)
    ids = [
        int(r.data["message_id"])
        for r in rows
        if r.name == "message_done" and r.data.get("role") == "assistant"
    ]
    messages = {m.pk: m for m in Message.objects.filter(pk__in=ids)} if ids else {}
    return rows, messages


def _settled(conversation_id: int) -> tuple[bool, list[Interrupt], str]:
    """(the conversation's agent is done for now, its interrupts, the last run's status).

    Done: no run queued or running, and either a question waits for the person or no
    run is suspended on anything else — an MCP call in the session host whose server
    just got the person's answer resumes the run when it returns, and this run's
    client wants what follows."""
    conversation = Conversation.objects.get(pk=conversation_id)
    active = selectors.run_active(conversation=conversation)
    latest = selectors.run_latest(conversation=conversation)
    status = latest.status if latest is not None else ""
    if active is not None:
        return False, [], status
    interrupts = interrupts_of(conversation)
    if not interrupts and status == RunStatus.SUSPENDED:
        held = waits_open(conversation_id=conversation_id)
        if any(w.kind == MCP_CALL_WAIT for w in held):
            return False, [], status
    return True, interrupts, status


async def _stream(prepared: Prepared, run_input: RunAgentInput) -> AsyncIterator[str]:
    encoder = EventEncoder()
    thread_id, run_id = run_input.thread_id, run_input.run_id
    yield encoder.encode(RunStartedEvent(thread_id=thread_id, run_id=run_id))
    for call, content in prepared.results:
        yield encoder.encode(_tool_result(call, content))
    state = _Translation()
    cursor = prepared.cursor
    deadline = time.monotonic() + settings.AGENT_TURN_TIME_LIMIT + 60
    while True:
        rows, messages = await sync_to_async(_rows)(prepared.conversation_id, cursor)
        for row in rows:
            cursor = row.id
            message = messages.get(int(row.data.get("message_id", 0) or 0))
            for event in state.events(row, message):
                yield encoder.encode(event)
        if len(rows) == PAGE:
            continue
        idle, interrupts, status = await sync_to_async(_settled)(prepared.conversation_id)
        started = prepared.run_id is not None or state.runs_seen
        if idle and (not started or state.runs_ended >= state.runs_seen):
            for event in state.close_text():
                yield encoder.encode(event)
            if status == RunStatus.FAILED and state.error is not None:
                code, message_text = state.error
                yield encoder.encode(RunErrorEvent(message=message_text or code, code=code))
                return
            outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome = (
                RunFinishedInterruptOutcome(interrupts=interrupts)
                if interrupts
                else RunFinishedSuccessOutcome()
            )
            yield encoder.encode(
                RunFinishedEvent(thread_id=thread_id, run_id=run_id, outcome=outcome)
            )
            return
        if time.monotonic() > deadline:
            yield encoder.encode(
                RunErrorEvent(message=_("The run took too long."), code="agui_timeout")
            )
            return
        await asyncio.sleep(POLL_SECONDS)

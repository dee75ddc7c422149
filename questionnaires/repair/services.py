"""Conversation repair (issue 36): what a message typed in the composer does while a
question waits for the person, for every kind with the registry's `pending` and `resolve`
hooks (inline cards and asks today; deferred forms and MCP elicitations once theirs land).

- "never mind" / "跳过": the waiting question is declined or skipped (`resolve(None)`);
- words that answer it (`questionnaires.protocol.repair.match_reply` against the kind's
  response schema): answered at once through the kind's `resolve` when the reply is
  exactly one whole question's answer and the kind allows it, else shown filled for one
  confirming click; either way `provenance: "free_text"` with the words kept (`"typed"`);
- "actually, make it X" / "不对，是X" changes the latest answer to X through its kind's
  change-answer path (`questionnaires.repair.amend`);
- anything else is a digression: the message is posted and answered as usual, and the
  waiting question stays open and is shown again below (the same wait, never a second
  question) — at most `REPAIR_REPROMPTS` times (per agent), each time more insistent;
  then the question is left unanswered and the agent takes it from there.

Each outcome is one `Repair` row (the typed words kept), read by analytics.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import MCP_CALL_WAIT, Conversation, Message, Role, Wait, WaitStatus
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.protocol.repair import Match, fields_of, intent, match_reply, payload_put
from questionnaires.registry import Kind, Pending, kind_named
from questionnaires.repair.amend import amend_latest
from questionnaires.repair.models import Repair, RepairOutcome

Outcome = RepairOutcome


@dataclass(frozen=True)
class Waiting:
    """A question waiting for the person that repair can answer."""

    wait: Wait
    kind: Kind
    pending: Pending


def waiting_questions(conversation: Conversation) -> list[Waiting]:
    """The conversation's open person-waits whose kind can describe and answer them."""
    found = []
    waits = (
        Wait.objects.filter(conversation_id=conversation.pk, status=WaitStatus.OPEN)
        .exclude(kind=MCP_CALL_WAIT)
        .order_by("id")
    )
    for wait in waits:
        try:
            kind = kind_named(wait.kind)
        except KeyError:
            continue
        if kind.pending is None or kind.resolve is None:
            continue
        pending = kind.pending(conversation, wait.ref)
        if pending is not None:
            found.append(Waiting(wait, kind, pending))
    return found


def reprompt_limit(conversation: Conversation) -> int:
    per_agent = getattr(settings, "REPAIR_REPROMPTS_PER_AGENT", {}) or {}
    return int(per_agent.get(conversation.agent, settings.REPAIR_REPROMPTS))


@dataclass(frozen=True)
class Result:
    """What a typed reply did: its outcome ("" when nothing waited), the user message it
    posted (None for a proposal: nothing is posted until the person confirms) and the
    repair row."""

    outcome: str
    message: Message | None
    repair: Repair | None = None


def _latest_user_message(conversation: Conversation) -> Message | None:
    return conversation.messages.filter(role=Role.USER).order_by("-seq").first()


def _close_open(conversation: Conversation, refs: Sequence[str] | None = None) -> None:
    rows = Repair.objects.filter(conversation_id=conversation.pk, open=True)
    if refs is not None:
        rows = rows.filter(wait_ref__in=list(refs))
    rows.update(open=False)


def _record(
    conversation: Conversation,
    waiting: Waiting,
    text: str,
    outcome: str,
    *,
    payload: Mapping[str, JsonValue] | None = None,
    reprompts: int = 0,
    open_: bool = False,
) -> Repair:
    _close_open(conversation)
    return Repair.objects.create(
        conversation_id=conversation.pk,
        wait_ref=waiting.wait.ref,
        kind=waiting.kind.name,
        typed_text=text,
        outcome=outcome,
        payload=dict(payload or {}),
        reprompts=reprompts,
        open=open_,
    )


def _resolve(
    conversation: Conversation, waiting: Waiting, payload: object, user: User, lang: str
) -> Message | None:
    if waiting.kind.resolve is None:  # waiting_questions lists only kinds that resolve
        raise ChatError("interrupt_answer_in_page", _("Answer this question on its card."))
    waiting.kind.resolve(
        conversation=conversation, ref=waiting.wait.ref, payload=payload, user=user, lang=lang
    )
    return _latest_user_message(conversation)


def typed_payload(kind: Kind, payload: Mapping[str, JsonValue], text: str) -> dict[str, JsonValue]:
    """The kind's answer payload for what was read, marked as typed where the kind takes
    it (`REPAIR_TYPED_KINDS`): `"typed"` carries the words, which the kind keeps with
    `provenance: "free_text"`. Other kinds get the payload as a click would send it."""
    if kind.name not in getattr(settings, "REPAIR_TYPED_KINDS", ()):
        return dict(payload)
    return {**payload, "typed": text.strip()}


def typed_reply(
    *,
    conversation: Conversation,
    content: str,
    user: User,
    lang: str,
    post: Callable[[], Message],
) -> Result:
    """Handle a message typed while a question waits (see the module). `post` sends the
    text as an ordinary message (the usual path). Runs in one transaction: a refusal
    (a ChatError from the kind) leaves nothing changed."""
    with transaction.atomic():
        said = intent(content)
        if said.kind == "amend":
            amended = amend_latest(
                conversation=conversation, words=said.rest, typed=content, user=user, lang=lang
            )
            if amended is not None:
                _close_open(conversation)
                row = Repair.objects.create(
                    conversation_id=conversation.pk,
                    wait_ref=amended.ref,
                    kind=amended.kind,
                    typed_text=content,
                    outcome=Outcome.AMENDED,
                    payload=dict(amended.payload),
                )
                return Result(Outcome.AMENDED, amended.message, row)
        waiting = waiting_questions(conversation)
        if not waiting:
            return Result("", post())
        first = waiting[0]
        if said.kind == "skip":
            message = _resolve(conversation, first, None, user, lang)
            row = _record(conversation, first, content, Outcome.SKIPPED)
            return Result(Outcome.SKIPPED, message, row)
        words = said.rest if said.kind == "amend" else content
        found = [
            (w, m)
            for w in waiting
            if (m := match_reply(w.pending.response_schema, words)) is not None
        ]
        if len(found) == 1:
            return _matched(conversation, content, found[0][0], found[0][1], user, lang)
        return _digression(conversation, content, first, waiting, post)


def _matched(
    conversation: Conversation, text: str, waiting: Waiting, match: Match, user: User, lang: str
) -> Result:
    confirm_kinds = getattr(settings, "REPAIR_CONFIRM_KINDS", ())
    if match.certain and waiting.kind.name not in confirm_kinds:
        sent = typed_payload(waiting.kind, match.payload, text)
        message = _resolve(conversation, waiting, sent, user, lang)
        row = _record(conversation, waiting, text, Outcome.ANSWERED, payload=match.payload)
        return Result(Outcome.ANSWERED, message, row)
    row = _record(conversation, waiting, text, Outcome.PROPOSED, payload=match.payload, open_=True)
    return Result(Outcome.PROPOSED, None, row)


def _digression(
    conversation: Conversation,
    text: str,
    first: Waiting,
    waiting: Sequence[Waiting],
    post: Callable[[], Message],
) -> Result:
    before = (
        Repair.objects.filter(conversation_id=conversation.pk, wait_ref=first.wait.ref)
        .order_by("-id")
        .values_list("reprompts", flat=True)
        .first()
    ) or 0
    # Recorded before the message is posted: the agent's turn may run at once and reads
    # it (`question_state`) to tell a question shown again from one to ask again.
    if before >= reprompt_limit(conversation):
        # Asked often enough: the question is left unanswered (its wait closed with the
        # message, as any message closes it); the agent reads the reply and moves on.
        row = _record(conversation, first, text, Outcome.EXHAUSTED, reprompts=before)
        return Result(Outcome.EXHAUSTED, post(), row)
    row = _record(conversation, first, text, Outcome.DIGRESSION, reprompts=before + 1, open_=True)
    message = post()
    # The message closed the waits whose answer is a message: the questions still wait.
    Wait.objects.filter(ref__in=[w.wait.ref for w in waiting]).update(
        status=WaitStatus.OPEN, closed_at=None
    )
    return Result(Outcome.DIGRESSION, message, row)


# --- the prompt below the conversation: a proposal to confirm, a question asked again ------


def open_prompt(conversation: Conversation) -> tuple[Repair, Waiting] | None:
    """The open repair row and its question, while that question still waits (a row whose
    question was answered meanwhile, on its card or in another tab, is closed)."""
    row = Repair.objects.filter(conversation_id=conversation.pk, open=True).order_by("-id").first()
    if row is None:
        return None
    for waiting in waiting_questions(conversation):
        if waiting.wait.ref == row.wait_ref:
            return row, waiting
    Repair.objects.filter(pk=row.pk).update(open=False)
    return None


def _posted_payload(waiting: Waiting, values: Mapping[str, Sequence[str]]) -> dict[str, JsonValue]:
    """The payload from the prompt's form: field `f-<n>` per answerable field (values as
    offered are sent by index, so any JSON value round-trips)."""
    payload: dict[str, JsonValue] = {}
    for index, field in enumerate(fields_of(waiting.pending.response_schema)):
        raw = [v for v in values.get(f"f-{index}", []) if v != ""]
        value: JsonValue
        if field.kind in ("choice", "multi"):
            picked = [field.options[int(v)].value for v in raw if _index_ok(v, field.options)]
            if not picked:
                continue
            value = picked if field.kind == "multi" else picked[0]
        elif field.kind == "boolean":
            if not raw or raw[0] not in ("true", "false"):
                continue
            value = raw[0] == "true"
        else:
            try:
                number = float(raw[0]) if raw else None
            except ValueError:
                number = None
            if number is None or not math.isfinite(number):
                continue
            value = int(number) if number.is_integer() else number
        payload_put(payload, field.path, value)
    return payload


def _index_ok(value: str, options: Sequence[object]) -> bool:
    return value.isdigit() and int(value) < len(options)


def prompt_answer(
    *,
    conversation: Conversation,
    repair_id: int,
    values: Mapping[str, Sequence[str]],
    action: str,
    user: User,
    lang: str,
    post: Callable[[str], Message],
) -> Result:
    """The person's click on the prompt: `answer` (the filled or chosen values; the words
    stay the source only if the proposal was sent as read), `skip`, or `send` (a proposal
    sent as an ordinary message instead — nothing typed is lost; `post` sends a text
    the usual way)."""
    with transaction.atomic():
        found = open_prompt(conversation)
        if found is None or found[0].pk != repair_id:
            raise ChatError(
                "repair_not_open",
                _("This question is no longer waiting; the conversation has moved on."),
                status=409,
            )
        row, waiting = found
        if action == "skip":
            message = _resolve(conversation, waiting, None, user, lang)
            Repair.objects.filter(pk=row.pk).update(open=False, outcome=Outcome.SKIPPED)
            return Result(Outcome.SKIPPED, message, row)
        if action == "send":
            if row.outcome != Outcome.PROPOSED:
                raise ChatError("repair_action_invalid", _("Nothing to send."))
            Repair.objects.filter(pk=row.pk).update(open=False, outcome=Outcome.DISMISSED)
            message = post(row.typed_text)  # the usual path
            return Result(Outcome.DISMISSED, message, row)
        if action != "answer":
            raise ChatError("repair_action_invalid", _("Unknown action."))
        payload = _posted_payload(waiting, values)
        if not payload:
            raise ChatError("answer_required", _("Choose an answer first, or skip the question."))
        as_read = row.outcome == Outcome.PROPOSED and payload == row.payload
        sent = typed_payload(waiting.kind, payload, row.typed_text) if as_read else payload
        message = _resolve(conversation, waiting, sent, user, lang)
        outcome = Outcome.CONFIRMED if row.outcome == Outcome.PROPOSED else row.outcome
        Repair.objects.filter(pk=row.pk).update(open=False, outcome=outcome)
        return Result(outcome, message, row)


def question_state(conversation: Conversation, ref: str) -> str:
    """For an agent reading a reply that did not answer its question `ref`: "waiting"
    (repair keeps it open and shows it again below: don't ask it again), "exhausted"
    (asked again as often as allowed: leave it unanswered and go on), or "" (repair had
    no part in it, e.g. a message posted through the API)."""
    latest = (
        Repair.objects.filter(conversation_id=conversation.pk, wait_ref=ref)
        .order_by("-id")
        .values_list("outcome", "open")
        .first()
    )
    if latest == (Outcome.DIGRESSION, True):
        return "waiting"
    return "exhausted" if latest is not None and latest[0] == Outcome.EXHAUSTED else ""

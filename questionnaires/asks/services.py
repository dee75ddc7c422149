"""Writes for structured collection: create an ask, take an answer, edit a slot."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.metadata import (
    AskPayload,
    MessageMetadata,
    StructuredAnswerEnvelope,
    intake_state,
    metadata_of,
)
from chat.core.models import Conversation, Message, Role, Run
from chat.core.runs import run_request
from chat.core.services import event_emit, message_create
from chat.core.waits import WaitLimited
from questionnaires.answering import answer_record
from questionnaires.asks import selectors
from questionnaires.asks.definitions import conversation_definition
from questionnaires.asks.extract import extract
from questionnaires.asks.models import KIND_NAME, StructuredAnswer
from questionnaires.asks.resolve import MAX_TEXT, Resolved, Source, answer_resolve
from questionnaires.asks.state import StatePatch
from questionnaires.protocol.ask_payload import AskInvalid, ask_validate, ask_widget
from questionnaires.protocol.ask_reference import ReferenceInvalid, reference_validate
from questionnaires.protocol.jsontypes import Json, JsonValue
from questionnaires.protocol.provenance import AMENDED, CHOSEN, FREE_TEXT, SKIPPED
from questionnaires.registry import AnswerPost, Recorded, input_refuse_if_waiting, wait_open

logger = logging.getLogger(__name__)
SOURCES = tuple(Source.values)


# How each source of an answer reads as its provenance (issue 27; the words of the
# questionnaire envelopes, `questionnaires.protocol.provenance`).
PROVENANCE: dict[str, str] = {
    Source.OPTION_CLICK: CHOSEN,
    Source.FREE_TEXT: FREE_TEXT,
    Source.SKIPPED: SKIPPED,
    Source.EDIT: AMENDED,
}


def new_turn_id() -> str:
    return "turn_" + uuid.uuid4().hex


def state_patch_emit(*, conversation: Conversation, patch: StatePatch, **extra: str) -> None:
    if patch.ops:
        event_emit(
            conversation_id=conversation.pk,
            name="consultation_state_patch",
            data={"patch": patch.ops, **extra},
        )


@contextmanager
def state_patched(conversation: Conversation, **extra: str) -> Iterator[StatePatch]:
    """Change the conversation's state: lock its row, patch it, save it and tell every open
    tab (`consultation_state_patch` with `extra`) — one transaction, however the caller
    patches. `conversation.state` follows."""
    with transaction.atomic(savepoint=False):
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        patch = StatePatch(locked.state)
        yield patch
        locked.save(update_fields=["state"])
        conversation.state = locked.state
        state_patch_emit(conversation=conversation, patch=patch, **extra)


def ask_create(
    *,
    conversation: Conversation,
    payload: object,
    run: Run | None = None,
    turn_id: str | None = None,
    reference: object = None,
    start_from: str = "",
) -> Message | None:
    """Persist an ask as an assistant message and emit `ask_user_options`.

    `start_from`: words the person said earlier (to another question) that may hold this
    scale's value ("maybe 4 out of 10"): the slider starts there, the words shown beside
    it. Only a start: nothing is answered until the person sends it.

    An invalid payload never becomes a widget: it emits an `error` event listing every
    problem and returns None. `reference` (optional, see `protocol/ask_reference.py`) is
    the knowledge source behind the question: kept in the message metadata as
    `knowledge_reference` and emitted as a `knowledge_reference` event; a malformed one
    emits an `error` event and the question is asked without it.
    """
    try:
        ask = ask_validate(payload, lang=conversation.language)
    except AskInvalid as invalid:
        event_emit(
            conversation_id=conversation.pk,
            name="error",
            data={
                "code": "ask_invalid",
                "message": _("The assistant sent a question that can't be shown."),
                "errors": [e.to_dict() for e in invalid.errors],
                "run_id": run.pk if run else None,
            },
        )
        return None
    knowledge = _reference_checked(conversation, ask, reference, run)
    turn_id = turn_id or new_turn_id()
    metadata: MessageMetadata = {"ask_user_options": ask, "turn_id": turn_id}
    if knowledge is not None:
        metadata["knowledge_reference"] = knowledge
    found = extract(ask, start_from) if ask["type"] == "scale" and start_from else None
    if found is not None and isinstance(found.value, int | float):
        metadata["ask_start"] = {"value": found.value, "said": start_from.strip()[:300]}
    try:
        with transaction.atomic():
            message = _ask_message(conversation, ask, metadata, run, knowledge, turn_id)
    except WaitLimited as limited:  # nothing was stored; the limit says why
        event_emit(
            conversation_id=conversation.pk,
            name="error",
            data={
                "code": limited.code,
                "message": limited.message,
                "run_id": run.pk if run else None,
            },
        )
        return None
    return message


def _ask_message(
    conversation: Conversation,
    ask: AskPayload,
    metadata: MessageMetadata,
    run: Run | None,
    knowledge: dict[str, str] | None,
    turn_id: str,
) -> Message:
    """The ask's message, its wait (limits checked) and its events (in the caller's
    transaction)."""
    message = message_create(
        conversation=conversation,
        role=Role.ASSISTANT,
        content=ask["question"],
        metadata=metadata,
        run=run,
    )
    wait_open(
        conversation=conversation,
        kind=KIND_NAME,
        ref=f"ask:{message.pk}",
        seconds=settings.WAIT_TIMEOUT,
        run=run,
    )
    event_emit(
        conversation_id=conversation.pk,
        name="ask_user_options",
        data={
            "type": "ask_user_options",
            "payload": ask,
            "message_id": message.pk,
            "turn_id": turn_id,
        },
    )
    if knowledge is not None:
        event_emit(
            conversation_id=conversation.pk,
            name="knowledge_reference",
            data={
                "turn_id": turn_id,
                "message_id": message.pk,
                "field": ask["field"],
                **knowledge,
            },
        )
    with state_patched(conversation, field=ask["field"]) as patch:
        if not patch.has_value(ask["field"]):
            patch.list_add("missing_slots", ask["field"])
    return message


def _reference_checked(
    conversation: Conversation, ask: AskPayload, reference: object, run: Run | None
) -> dict[str, str] | None:
    """The normalized reference; a malformed one becomes an `error` event and None."""
    if reference is None:
        return None
    try:
        return reference_validate(reference, lang=conversation.language)
    except ReferenceInvalid as invalid:
        event_emit(
            conversation_id=conversation.pk,
            name="error",
            data={
                "code": "knowledge_reference_invalid",
                "message": _(
                    "The source behind a question can't be shown; the question is asked without it."
                ),
                "errors": [e.to_dict() for e in invalid.errors],
                "field": ask["field"],
                "run_id": run.pk if run else None,
            },
        )
        return None


def _answer_fields(answer: Mapping[str, object]) -> tuple[str, str, object, str, str]:
    if answer.get("type", "structured_answer") != "structured_answer":
        raise ChatError("answer_type_invalid", _("“type” must be “structured_answer”."))
    source = answer.get("source", Source.OPTION_CLICK)
    if source not in SOURCES:
        raise ChatError(
            "answer_source_invalid",
            _("“source” must be one of: %(sources)s.") % {"sources": ", ".join(SOURCES)},
        )
    field, turn_id = answer.get("field"), answer.get("turn_id", "")
    text = answer.get("raw_text", answer.get("text", ""))
    if not isinstance(field, str) or not field or not isinstance(turn_id, str):
        raise ChatError("answer_field_required", _("“field” and “turn_id” must be strings."))
    if not isinstance(text, str):
        raise ChatError("answer_text_invalid", _("“raw_text” must be a string."))
    return source, field, answer.get("value"), text, turn_id


def ask_answer(
    *, conversation: Conversation, answer: Mapping[str, object], ask_message: Message | None = None
) -> tuple[StructuredAnswer, bool]:
    """Record an answer to an ask (spec 004 §4–5) and start the next run.

    Returns `(answer, created)`. The same answer sent again (a double click, a retry)
    returns the first with `created=False`; a *different* second answer is refused with
    409 `questionnaire_already_submitted`, as cards are. Neither changes anything.
    """
    source, field, value, text, turn_id = _answer_fields(answer)
    if source == Source.EDIT:
        return slot_edit(conversation=conversation, field=field, value=value, text=text), True
    input_refuse_if_waiting(conversation=conversation)
    if ask_message is None:
        ask_message = selectors.ask_find(conversation=conversation, turn_id=turn_id, field=field)
    ask = metadata_of(ask_message).get("ask_user_options") or {}
    if ask["field"] != field:
        raise ChatError("answer_field_mismatch", _("This answer is for a different question."))
    first = AskAnswer(ask_message=ask_message, ask=ask, source=source, value=value, text=text)
    try:
        answered = answer_record(conversation=conversation, kind=KIND_NAME, answer=first)
    except AlreadyRecorded as again:
        return again.row, False
    return cast(StructuredAnswer, answered.recorded.row), True


@dataclass(frozen=True)
class AskAnswer:
    """A first answer to an ask, on the one answer path (`answer_row`)."""

    ask_message: Message
    ask: AskPayload
    source: str
    value: object
    text: str


@dataclass(frozen=True)
class AskChange:
    """A change of answer `version` of an ask (issue 27), on the one answer path."""

    ask_message: Message
    ask: AskPayload
    version: int
    resolved: Resolved | None
    text: str


class AlreadyRecorded(Exception):  # noqa: N818 - a signal, not an error
    """The same answer again (a double click, a retry): `row` is the one recorded."""

    def __init__(self, row: StructuredAnswer) -> None:
        super().__init__(row.pk)
        self.row = row


def answer_row(conversation: Conversation, answer: object) -> Recorded:
    """The kind's `record` on the one answer path (under the conversation's lock): a first
    answer or a change, checked, written into its row and the state, and what to post."""
    if isinstance(answer, AskChange):
        return _change_row(conversation, answer)
    if not isinstance(answer, AskAnswer):
        raise TypeError(answer)
    existing = selectors.answer_for_ask(ask_message=answer.ask_message)
    if existing is not None:
        raise AlreadyRecorded(_said_again(existing, answer))
    if not selectors.ask_is_answerable(conversation=conversation, ask_message=answer.ask_message):
        raise ChatError(
            "ask_not_latest",
            _("This question has been superseded; answer the latest one."),
            status=409,
        )
    source = answer.source
    resolved = answer_resolve(answer.ask, source=source, value=answer.value, text=answer.text)
    if resolved is not None and source == Source.OPTION_CLICK and resolved.raw_text:
        source = Source.FREE_TEXT
    return _first_row(conversation, answer, source, resolved)


def answer_conflict(conversation: Conversation, answer: object) -> Exception:
    """A unique constraint refused the row: another tab answered (or changed) it first."""
    if isinstance(answer, AskChange):
        return _ask_stale(selectors.answer_for_ask(ask_message=answer.ask_message))
    if not isinstance(answer, AskAnswer):
        raise TypeError(answer)
    existing = selectors.answer_for_ask(ask_message=answer.ask_message)
    if existing is None:
        return _already_answered(answer.ask, None)
    try:
        return AlreadyRecorded(_said_again(existing, answer))
    except ChatError as refused:
        return refused


def _said_again(existing: StructuredAnswer, answer: AskAnswer) -> StructuredAnswer:
    """The recorded answer when this one says the same (else 409, as `_again`)."""
    return _again(existing, answer.ask, source=answer.source, value=answer.value, text=answer.text)


def _again(
    existing: StructuredAnswer, ask: AskPayload, *, source: str, value: object, text: str
) -> StructuredAnswer:
    """The recorded answer when this one says the same; 409 when it says something else."""
    try:
        resolved = answer_resolve(ask, source=source, value=value, text=text)
    except ChatError:
        resolved = None
        same = False
    else:
        same = (resolved is None) == (existing.source == Source.SKIPPED) and (
            resolved is None or resolved.value == existing.value
        )
    if not same:
        raise _already_answered(ask, existing)
    return existing


def _already_answered(ask: AskPayload, existing: StructuredAnswer | None) -> ChatError:
    return ChatError(
        "questionnaire_already_submitted",
        _("This question has already been answered."),
        status=409,
        details={"field": ask["field"], "value": existing.value if existing else None},
    )


def _readable(ask: AskPayload, source: str, resolved: Resolved | None) -> str:
    if resolved is None:
        return _("Skipped: %(question)s") % {"question": ask["question"]}
    if source == Source.FREE_TEXT:
        return resolved.raw_text
    return resolved.display_text


def _labelled(conversation: Conversation, ask: AskPayload, text: str) -> str:
    """An intake slot's answer with the slot's label ("Fixed deadline: Yes", not a bare
    "Yes" that a later reader can't place): the bubble, the record and what the agent
    reads. An ask of no definition shows right under its own question, as it is."""
    definition = conversation_definition(conversation)
    slot = definition.slot(ask["field"]) if definition is not None else None
    if slot is None or definition is None or not text:
        return text
    sep = "：" if definition.language.startswith("zh") else ": "
    return f"{slot.label}{sep}{text}"


def _first_row(
    conversation: Conversation, answer: AskAnswer, source: str, resolved: Resolved | None
) -> Recorded:
    ask, ask_message = answer.ask, answer.ask_message
    turn_id = metadata_of(ask_message).get("turn_id", "")
    envelope: StructuredAnswerEnvelope = {
        "type": "structured_answer",
        "field": ask["field"],
        "value": resolved.value if resolved else None,
        "display_text": resolved.display_text if resolved else "",
        "source": source,
        "turn_id": turn_id,
        "provenance": PROVENANCE[source],
    }
    if resolved is not None and resolved.raw_text:
        envelope["raw_text"] = resolved.raw_text
        envelope["confidence"] = resolved.confidence
    # The state first: an inline runner (tests, the intake's first turn) executes the
    # next turn inside answer_post and must see the answer in the state.
    row = _record(
        conversation,
        ask_message=ask_message,
        turn_id=turn_id,
        field=ask["field"],
        source=source,
        resolved=resolved,
        shown=question_shown(ask),
        raw_text=answer.text.strip(),
    )
    readable = _readable(ask, source, resolved)
    return Recorded(
        row=row,
        post=AnswerPost(
            content=json.dumps(envelope, ensure_ascii=False, separators=(",", ":")),
            display=_labelled(conversation, ask, readable) if resolved is not None else readable,
            metadata={"structured_answer": envelope},
            lock_event={"kind": "ask", "message_id": ask_message.pk, "field": ask["field"]},
        ),
        link=_linker(row),
        outcome="answered" if resolved is not None else "skipped",
        draft=str(ask_message.pk),
    )


def _linker(row: StructuredAnswer) -> Callable[[Message], None]:
    def link(message: Message) -> None:
        StructuredAnswer.objects.filter(pk=row.pk).update(user_message=message)
        row.user_message = message

    return link


def _record(
    conversation: Conversation,
    *,
    ask_message: Message | None,
    turn_id: str,
    field: str,
    source: str,
    resolved: Resolved | None,
    shown: dict[str, JsonValue],
    raw_text: str = "",
    amends: StructuredAnswer | None = None,
) -> StructuredAnswer:
    """Store one answer (a skip when `resolved` is None) and write it into the state."""
    row = StructuredAnswer.objects.create(
        shown=shown,
        conversation=conversation,
        ask_message=ask_message,
        turn_id=turn_id,
        field=field,
        value=resolved.value if resolved else None,
        display_text=resolved.display_text if resolved else "",
        raw_text=resolved.raw_text if resolved else raw_text,
        source=source,
        confidence=resolved.confidence if resolved else 0.0,
        amends=amends,
    )
    _state_write(conversation, row, resolved)
    return row


def _slot_label(conversation: Conversation, field: str) -> str:
    """The side panel's name for a slot (its definition's label), or ""."""
    definition = conversation_definition(conversation)
    slots = definition.slots if definition is not None else []
    return next((slot.label for slot in slots if slot.field == field), "")


def question_shown(ask: AskPayload, *, widget: str = "", label: str = "") -> dict[str, JsonValue]:
    """The question as the person saw it (DESIGN §4.14): its words, options and widget, in
    the language the page was in. `label` is the side panel's name for the slot."""
    shown: dict[str, JsonValue] = {
        "question": label or ask.get("question", ""),
        "options": [{"value": o["value"], "label": o["label"]} for o in ask.get("options") or []],
        "widget": widget or ask_widget(ask),
        "language": get_language() or settings.LANGUAGE_CODE,
    }
    for key in ("min", "max", "step"):
        if key in ask:
            shown[key] = ask[key]
    return shown


def _state_write(
    conversation: Conversation, row: StructuredAnswer, resolved: Resolved | None
) -> None:
    with state_patched(conversation, field=row.field, source=row.source) as patch:
        patch.history_add(
            row.field,
            {
                "value": resolved.value if resolved else None,
                "display": resolved.display_text if resolved else "",
                "source": row.source,
                "provenance": PROVENANCE[row.source],
            },
        )
        if resolved is None:
            patch.list_add("skipped_slots", row.field)
        else:
            patch.fill(
                row.field,
                resolved.value,
                display=resolved.display_text,
                confidence=resolved.confidence,
                raw_text=resolved.raw_text,
            )
    if resolved is not None and resolved.extracted:
        event_emit(
            conversation_id=conversation.pk,
            name="extracted_info",
            data={
                "field": row.field,
                "value": resolved.value,
                "display_text": resolved.display_text,
                "raw_text": resolved.raw_text,
                "confidence": resolved.confidence,
                "source": row.source,
            },
        )


def ask_answer_change(
    *,
    conversation: Conversation,
    ask_message: Message,
    version: int,
    source: str,
    value: object,
    text: str = "",
) -> StructuredAnswer:
    """Change an answered ask ("Change answer", issue 27): a new answer with source
    `user_edit` that amends answer `version` (the id of the answer the person saw), posted as
    the next user message (`provenance: amended`, `amends` = the earlier message) and
    written into the state with its history. Exactly once per version: a change of an answer
    that was changed meanwhile (another tab) is 409 `questionnaire_version_stale`."""
    input_refuse_if_waiting(conversation=conversation)
    ask = metadata_of(ask_message).get("ask_user_options") or {}
    if source not in (Source.OPTION_CLICK, Source.FREE_TEXT):
        raise ChatError("answer_source_invalid", _("Choose an option or type your answer."))
    resolved = answer_resolve(ask, source=source, value=value, text=text)
    change = AskChange(
        ask_message=ask_message, ask=ask, version=version, resolved=resolved, text=text
    )
    answered = answer_record(conversation=conversation, kind=KIND_NAME, answer=change)
    return cast(StructuredAnswer, answered.recorded.row)


def _change_row(conversation: Conversation, change: AskChange) -> Recorded:
    ask, ask_message, resolved = change.ask, change.ask_message, change.resolved
    latest = selectors.answer_for_ask(ask_message=ask_message)
    if latest is None:
        raise ChatError(
            "questionnaire_not_answered",
            _("This question has no answer to change yet."),
            status=409,
        )
    if latest.pk != change.version:
        raise _ask_stale(latest)
    if resolved is None or resolved.value == latest.value:
        raise ChatError(
            "answer_unchanged",
            _("Nothing changed: choose another answer, or keep the one you sent."),
        )
    row = _record(
        conversation,
        ask_message=ask_message,
        turn_id=latest.turn_id,
        field=latest.field,
        source=Source.EDIT,
        resolved=resolved,
        shown=question_shown(ask),
        raw_text=change.text.strip(),
        amends=latest,
    )
    envelope: StructuredAnswerEnvelope = {
        "type": "structured_answer",
        "field": row.field,
        "value": row.value,
        "display_text": row.display_text,
        "source": Source.EDIT,
        "turn_id": row.turn_id,
        "provenance": AMENDED,
    }
    if latest.user_message_id is not None:
        envelope["amends"] = latest.user_message_id
    if row.raw_text:
        envelope["raw_text"] = row.raw_text
    was = latest.display_text if latest.value is not None else _("skipped")
    display = _("Changed my answer: %(question)s %(now)s (was: %(was)s)") % {
        "question": ask.get("question", ""),
        "now": row.display_text,
        "was": was,
    }
    lock = {"kind": "ask", "message_id": ask_message.pk, "field": row.field, "version": row.pk}
    return Recorded(
        row=row,
        post=AnswerPost(
            content=json.dumps(envelope, ensure_ascii=False, separators=(",", ":")),
            display=display,
            metadata={"structured_answer": envelope},
            lock_event=lock,
        ),
        link=_linker(row),
    )


def _ask_stale(latest: StructuredAnswer | None) -> ChatError:
    """The person changed an answer that another tab changed first: say what it is now."""
    if latest is None:
        message = _(
            "This answer was changed meanwhile, maybe in another tab. Here is the latest one."
        )
    else:
        answer = latest.display_text if latest.value is not None else _("skipped")
        message = _(
            "This answer was changed meanwhile, maybe in another tab: it is now “%(answer)s”."
        ) % {"answer": answer}
    return ChatError("questionnaire_version_stale", message, status=409)


def slot_edit(
    *, conversation: Conversation, field: str, value: object, text: str = ""
) -> StructuredAnswer:
    """The user corrects a slot from the state panel (or `source: user_edit` over the API): a
    new answer with source user_edit. Refused like any other input while a card holds the
    conversation (409 `pending_interactive_form`, …)."""
    input_refuse_if_waiting(conversation=conversation)
    ask = selectors.ask_for_field(conversation=conversation, field=field)
    if ask is None:
        raise ChatError(
            "slot_unknown",
            _("There is no field “%(field)s” to edit.") % {"field": field},
            status=404,
        )
    source = Source.FREE_TEXT if text.strip() and value in (None, "") else Source.OPTION_CLICK
    resolved = answer_resolve(ask, source=source, value=value, text=text)
    if resolved is None:  # unreachable: only a skip resolves to nothing
        raise ChatError("answer_value_invalid", _("Choose or type a value."))
    with transaction.atomic():
        row = _record(
            conversation,
            ask_message=None,
            turn_id=new_turn_id(),
            field=field,
            source=Source.EDIT,
            resolved=resolved,
            shown=question_shown(ask, widget="panel", label=_slot_label(conversation, field)),
        )
        _summary_again_if_confirming(conversation)
        return row


def _summary_again_if_confirming(conversation: Conversation) -> None:
    """An intake whose summary waits for confirmation: a corrected slot makes that summary
    stale, so the agent takes a turn (no message of the person's) and brings the same
    summary up to date in place (chat.agent.intake), or asks a slot the edit made due."""
    conversation.refresh_from_db(fields=["state"])
    if intake_state(conversation).get("status") == "confirming":
        run_request(conversation=conversation, message=None)


def free_text_record(
    *, conversation: Conversation, ask_message: Message, text: str
) -> StructuredAnswer | None:
    """An agent read a pending ask's value out of a typed chat message.

    Stored like a free-text answer (the ask is then answered) but without a new user
    message or run: the typed message is already in the chat and already triggered this
    run. Returns None when nothing could be read.
    """
    ask = metadata_of(ask_message).get("ask_user_options") or {}
    found = extract(ask, text)
    if found is None or selectors.answer_for_ask(ask_message=ask_message) is not None:
        return None
    resolved = Resolved(found.value, found.display_text, found.confidence, text.strip(), True)
    return _record_once(conversation, ask_message, ask, Source.FREE_TEXT, resolved)


def skip_record(
    *, conversation: Conversation, ask_message: Message, text: str = ""
) -> StructuredAnswer | None:
    """An agent leaves a pending ask unanswered: it was asked again as often as allowed
    and the person's replies still didn't answer it (conversation repair, issue 36).
    Stored as skipped with the last words kept, without a new message or run (the typed
    message already triggered this run). None when it was answered meanwhile."""
    ask = metadata_of(ask_message).get("ask_user_options") or {}
    if not ask or selectors.answer_for_ask(ask_message=ask_message) is not None:
        return None
    return _record_once(
        conversation, ask_message, ask, Source.SKIPPED, None, raw_text=text.strip()[:MAX_TEXT]
    )


def _record_once(
    conversation: Conversation,
    ask_message: Message,
    ask: AskPayload,
    source: str,
    resolved: Resolved | None,
    raw_text: str = "",
) -> StructuredAnswer | None:
    """An agent's answer to an ask (read from words, or left skipped), without a message
    or a run; None when another answer got there first (the unique answer per ask)."""
    try:
        with transaction.atomic():
            return _record(
                conversation,
                ask_message=ask_message,
                turn_id=metadata_of(ask_message).get("turn_id", ""),
                field=ask["field"],
                source=source,
                resolved=resolved,
                shown=question_shown(ask),
                raw_text=raw_text,
            )
    except IntegrityError:
        return None


def slots_clear(*, conversation: Conversation, fields: list[str]) -> None:
    """Put fields back to collect (an intake summary the user wants to correct)."""
    with state_patched(conversation) as patch:
        for field in fields:
            patch.clear(field)


def missing_slots_set(*, conversation: Conversation, fields: list[str]) -> None:
    """Declare which fields are still to be collected (in asking order)."""
    with state_patched(conversation) as patch:
        patch.missing_set(fields)


def state_section_merge(
    *, conversation: Conversation, key: str, values: Mapping[str, Json]
) -> None:
    """Merge `values` into `Conversation.state[key]` (an agent's own bookkeeping)."""
    with state_patched(conversation) as patch:
        patch.section_merge(key, values)

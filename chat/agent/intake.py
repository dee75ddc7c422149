"""The built-in intake agent: a turn function `(run) -> stop_reason`, offline.

Each turn: take in what the triggering message says (a structured answer is already in
the state; typed text is read against the open asks; a questionnaire response confirms
or reopens the summary), then ask the next 1–2 applicable slots, or — when nothing is
left — post a summary with a fenced inline questionnaire to confirm or correct.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import yaml
from django.db import transaction
from django.utils.translation import gettext as _

from chat.core.metadata import intake_state, metadata_of, state_of
from chat.core.models import Conversation, Message, Role, Run, StopReason
from chat.core.services import message_create
from questionnaires.asks import selectors as ask_selectors
from questionnaires.asks import services as asks
from questionnaires.asks.definitions import (
    Definition,
    Slot,
    conversation_definition,
    definition_ids,
)
from questionnaires.asks.state import state_view
from questionnaires.protocol import ResponseSegment, parse_message
from questionnaires.protocol.jsontypes import Json

logger = logging.getLogger(__name__)
CHOOSE_FIELD = "intake_definition"


def intake_turn(run: Run) -> str:
    conversation = Conversation.objects.get(pk=run.conversation_id)
    trigger = run.trigger_message
    definition = conversation_definition(conversation)
    if definition is None:
        definition = _choose(conversation, run, trigger)
        if definition is None:
            return StopReason.AWAITING_USER_INPUT
    status = intake_state(conversation).get("status", "collecting")
    if trigger is not None and "structured_answer" not in metadata_of(trigger):
        reply = _take_in_text(conversation, definition, run, trigger, status)
        if reply is not None:
            return reply
    _missing_sync(conversation, definition)
    if ask_selectors.ask_pending(conversation=conversation):
        return StopReason.AWAITING_USER_INPUT  # a sibling ask of this turn is still open
    return _next_step(conversation, definition, run)


# --- choosing a definition (conversations created without one, e.g. through the API) ---


def _choose(conversation: Conversation, run: Run, trigger: Message | None) -> Definition | None:
    answer = metadata_of(trigger).get("structured_answer") if trigger else None
    chosen = answer.get("value") if answer and answer.get("field") == CHOOSE_FIELD else None
    if chosen is None and trigger is not None and not answer:
        pending = ask_selectors.ask_pending_before(conversation=conversation, seq=trigger.seq)
        for ask_message in pending:
            row = asks.free_text_record(
                conversation=conversation, ask_message=ask_message, text=trigger.content
            )
            if row is not None and row.field == CHOOSE_FIELD:
                chosen = row.value
    if chosen is not None:
        intake_select(conversation=conversation, definition_id=str(chosen))
        # The routing answer chose the topic; it is not one of the topic's answers (its
        # panel lists only what the topic collects).
        asks.slots_clear(conversation=conversation, fields=[CHOOSE_FIELD])
        conversation.refresh_from_db(fields=["state"])
        definition = conversation_definition(conversation)
        if definition is not None:
            return definition
    asks.ask_create(
        conversation=conversation,
        run=run,
        payload={
            "question": _("Which intake would you like to start?"),
            "field": CHOOSE_FIELD,
            "options": [
                {"label": title, "value": key, "synonyms": [key.replace("_", " ")]}
                for key, title in definition_ids()
            ],
        },
    )
    return None


def intake_select(*, conversation: Conversation, definition_id: str) -> None:
    """Store which definition a conversation collects (in `Conversation.state`)."""
    asks.state_section_merge(
        conversation=conversation,
        key="intake",
        values={"definition": definition_id, "status": "collecting"},
    )


# --- reading typed text ----------------------------------------------------------------


def _take_in_text(
    conversation: Conversation, definition: Definition, run: Run, trigger: Message, status: str
) -> str | None:
    """Handle a typed message or a questionnaire response; a stop reason ends the turn."""
    response = _questionnaire_response(trigger)
    if response is not None:
        return _confirmation(conversation, definition, run, response)
    if status == "confirmed":
        _say(conversation, run, definition.texts["done"])
        return StopReason.COMPLETED
    pending = ask_selectors.ask_pending_before(conversation=conversation, seq=trigger.seq)
    read = [
        asks.free_text_record(conversation=conversation, ask_message=m, text=trigger.content)
        for m in pending
    ]
    if pending and not any(read):
        _say(conversation, run, definition.texts["not_understood"])
    return None


def _said_for(conversation: Conversation, slot: Slot) -> str:
    """For a scale asked after the question it depends on, the words the person typed for
    that question: "maybe 4 out of 10" to "does it come with pain?" holds the 0–10 score.
    They only set where the slider starts (`asks.ask_create(start_from=…)`): a question
    never shown is never answered for the person (DESIGN §4.14), and no slot appears from
    reading words."""
    if slot.ask.get("type") != "scale" or not slot.when:
        return ""
    view = state_view(state_of(conversation))
    return view["raw_text"].get(str(slot.when["field"]), "")


def _questionnaire_response(message: Message) -> dict[str, Json] | None:
    if message.role != Role.USER or "-response>" not in message.content:
        return None
    for segment in parse_message(message.content, message_id=str(message.pk), role="user"):
        if isinstance(segment, ResponseSegment):
            return segment.payload
    return None


def _confirmation(
    conversation: Conversation, definition: Definition, run: Run, response: dict[str, Json]
) -> str:
    intake = intake_state(conversation)
    if response.get("questionnaire_id") != intake.get("summary_questionnaire_id"):
        return _next_step(conversation, definition, run)
    listed = response.get("answers")
    answers = [a for a in listed if isinstance(a, dict)] if isinstance(listed, list) else []
    first = answers[0] if answers else {}
    confirmed = definition.texts["confirm_yes"] in (first.get("label"), first.get("answer"))
    labels = answers[1].get("labels") if len(answers) > 1 else None
    chosen = [str(label) for label in labels] if isinstance(labels, list) else []
    fields = [s.field for s in definition.slots if s.label in chosen]
    if confirmed and not fields:
        _status_set(conversation, "confirmed")
        _say(conversation, run, definition.texts["done"])
        return StopReason.COMPLETED
    _status_set(conversation, "collecting")
    if fields:
        asks.slots_clear(conversation=conversation, fields=fields)
        conversation.refresh_from_db(fields=["state"])
        _missing_sync(conversation, definition)
        return _ask_slots(conversation, definition, run, [definition.slot(f) for f in fields])
    return _post_summary(conversation, definition, run)


# --- asking and summarizing ------------------------------------------------------------


def _applicable(definition: Definition, values: Mapping[str, Json]) -> list[Slot]:
    return [slot for slot in definition.slots if slot.applies(values)]


def _missing_sync(conversation: Conversation, definition: Definition) -> None:
    values = state_view(state_of(conversation))["consultation_state"]
    missing = [
        s.field for s in _applicable(definition, values) if s.required and s.field not in values
    ]
    asks.missing_slots_set(conversation=conversation, fields=missing)


def _next_step(conversation: Conversation, definition: Definition, run: Run) -> str:
    view = state_view(state_of(conversation))
    values, skipped = view["consultation_state"], set(view["skipped_slots"])
    todo = [
        s
        for s in _applicable(definition, values)
        if s.field not in values and s.field not in skipped
    ]
    if todo:
        return _ask_slots(conversation, definition, run, todo)
    return _post_summary(conversation, definition, run)


def _ask_slots(
    conversation: Conversation, definition: Definition, run: Run, slots: Sequence[Slot | None]
) -> str:
    todo = [s for s in slots if s is not None]
    # Two asks in one turn only when the second doesn't depend on the first's answer.
    batch = todo[:1]
    if definition.ask_per_turn == 2 and len(todo) > 1 and not todo[1].when:
        batch.append(todo[1])
    if not ask_selectors.ask_any(conversation=conversation):
        _say(conversation, run, definition.texts["intro"])
    turn_id = f"turn_{run.pk}_{conversation.messages.count()}"
    for slot in batch:
        asks.ask_create(
            conversation=conversation,
            payload=slot.ask,
            run=run,
            turn_id=turn_id,
            reference=slot.reference,
            start_from=_said_for(conversation, slot),
        )
    return StopReason.AWAITING_USER_INPUT


def _post_summary(conversation: Conversation, definition: Definition, run: Run) -> str:
    view = state_view(state_of(conversation))
    lines = [definition.texts["summary_intro"], ""]
    for slot in _applicable(definition, view["consultation_state"]):
        shown = view["display"].get(slot.field)
        if shown is None and slot.field in view["consultation_state"]:
            shown = str(view["consultation_state"][slot.field])
        lines.append(f"- **{slot.label}**: {_md(shown) if shown else definition.texts['skipped']}")
    questionnaire = {
        "title": definition.texts["confirm_title"],
        "questions": [
            {
                "type": "single_choice",
                "text": definition.texts["confirm_question"],
                "options": [definition.texts["confirm_yes"], definition.texts["confirm_no"]],
                "default": definition.texts["confirm_yes"],
            },
            {
                "type": "multi_choice",
                "text": definition.texts["correct_question"],
                "options": [s.label for s in _applicable(definition, view["consultation_state"])],
                "default": [],
            },
        ],
    }
    body = yaml.safe_dump(questionnaire, allow_unicode=True, sort_keys=False, width=1000)
    content = "\n".join(lines) + "\n\n```questionnaire\n" + body + "```\n"
    # One transaction: open tabs fetch the summary (on message_done, after commit) already
    # knowing it is the summary (the page shows its second question only when needed).
    with transaction.atomic():
        message = message_create(
            conversation=conversation, role=Role.ASSISTANT, content=content, run=run
        )
        _status_set(conversation, "confirming", summary_questionnaire_id=f"{message.pk}_q1")
    return StopReason.AWAITING_USER_INPUT


def _md(text: str) -> str:
    """Plain text inside a Markdown list item: no markup, no fences."""
    cleaned = " ".join(text.split()).replace("`", "'")
    return "".join("\\" + c if c in "\\*_[]<>#|" else c for c in cleaned)


def _say(conversation: Conversation, run: Run, text: str) -> None:
    """The agent's own line in the chat (the definition's texts)."""
    message_create(conversation=conversation, role=Role.ASSISTANT, content=text, run=run)


def _status_set(conversation: Conversation, status: str, **extra: Json) -> None:
    asks.state_section_merge(
        conversation=conversation, key="intake", values={"status": status, **extra}
    )

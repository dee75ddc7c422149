"""The built-in intake agent: a turn function `(run) -> stop_reason`, offline.

Each turn: take in what the triggering message says (a structured answer is already in
the state; typed text is read against the open asks; a questionnaire response confirms
or reopens the summary), then ask the next 1–2 applicable slots, or — when nothing is
left — post a summary with a fenced inline questionnaire to confirm or correct.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

from django.db import transaction
from django.utils.translation import gettext as _

from chat.core import selectors as core_selectors
from chat.core.metadata import intake_state, metadata_of, state_of
from chat.core.models import Conversation, Message, Role, Run, StopReason
from chat.core.services import message_content_replace, message_create
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
from questionnaires.repair.services import question_state

logger = logging.getLogger(__name__)
CHOOSE_FIELD = "intake_definition"
CONFIRM_YES, CONFIRM_CHANGE = "yes", "change"  # the summary card's option values


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
        # Conversation repair (issue 36): a question shown again below the reply is not
        # asked a second time; one asked again as often as allowed is left unanswered.
        states = {question_state(conversation, f"ask:{m.pk}") for m in pending}
        if states == {"waiting"}:
            _say(conversation, run, definition.texts["not_understood"])
            return StopReason.AWAITING_USER_INPUT
        if "exhausted" in states:
            for m in pending:
                asks.skip_record(conversation=conversation, ask_message=m, text=trigger.content)
            _say(conversation, run, _("Let's leave that question for now."))
            return None
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
    """The person's answer to the summary card or to "which answers should change?".

    Declining either ends the intake unconfirmed, saying how to confirm later (Change
    answer on the card, or the panel): re-posting the same card would leave confirming as
    the only way out."""
    intake = intake_state(conversation)
    qid = response.get("questionnaire_id")
    if qid not in (intake.get("summary_questionnaire_id"), intake.get("change_questionnaire_id")):
        return _next_step(conversation, definition, run)
    listed = response.get("answers")
    answers = [a for a in listed if isinstance(a, dict)] if isinstance(listed, list) else []
    # "Skip this question" on the one question of the summary says as little as declining.
    skipped = qid == intake.get("summary_questionnaire_id") and any(
        a.get("provenance") == "skipped" for a in answers[:1]
    )
    if response.get("status") == "declined" or skipped:
        _status_set(conversation, "declined")
        _say(conversation, run, definition.texts["declined"])
        return StopReason.COMPLETED
    if qid == intake.get("change_questionnaire_id"):
        chosen = answers[0].get("values") if answers else None
        fields = (
            [str(f) for f in chosen if definition.slot(str(f))] if isinstance(chosen, list) else []
        )
        return _correct(conversation, definition, run, fields)
    # Summaries stored before the one-question card listed the answers to change in q2.
    labels = answers[1].get("labels") if len(answers) > 1 else None
    if isinstance(labels, list) and labels:
        fields = [s.field for s in definition.slots if s.label in labels]
        return _correct(conversation, definition, run, fields)
    first = answers[0] if answers else {}
    if first.get("answer") == CONFIRM_YES or first.get("label") == definition.texts["confirm_yes"]:
        _status_set(conversation, "confirmed")
        _say(conversation, run, definition.texts["done"])
        return StopReason.COMPLETED
    return _post_change_card(conversation, definition, run)


def _correct(
    conversation: Conversation, definition: Definition, run: Run, fields: list[str]
) -> str:
    """Ask the chosen slots again; with none chosen, the summary to confirm once more."""
    _status_set(conversation, "collecting")
    if not fields:
        return _post_summary(conversation, definition, run)
    asks.slots_clear(conversation=conversation, fields=fields)
    conversation.refresh_from_db(fields=["state"])
    _missing_sync(conversation, definition)
    return _ask_slots(conversation, definition, run, [definition.slot(f) for f in fields])


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
    """The summary to confirm: every applicable slot labelled, then a one-question card
    ("Is this correct?") with nothing preselected: confirming is the person's act.

    A summary still open (the latest message, not answered) is brought up to date in
    place rather than posted again (a slot edited in the panel): one summary in the
    thread, the same after a reload, and the card's id (what the answer names) unchanged.
    """
    view = state_view(state_of(conversation))
    lines = [definition.texts["summary_intro"], ""]
    sep = "：" if definition.language.startswith("zh") else ": "  # full-width in Chinese
    for slot in _applicable(definition, view["consultation_state"]):
        shown = view["display"].get(slot.field)
        if shown is None and slot.field in view["consultation_state"]:
            shown = str(view["consultation_state"][slot.field])
        lines.append(
            f"- **{slot.label}**{sep}{_md(shown) if shown else definition.texts['skipped']}"
        )
    card: dict[str, Json] = {
        "title": definition.texts["confirm_title"],
        "questions": [
            {
                "id": "confirm",
                "type": "single_choice",
                "text": definition.texts["confirm_question"],
                "options": [
                    {"value": CONFIRM_YES, "label": definition.texts["confirm_yes"]},
                    {"value": CONFIRM_CHANGE, "label": definition.texts["confirm_no"]},
                ],
            }
        ],
    }
    content = "\n".join(lines) + "\n\n" + _card(card)
    open_summary = _open_summary(conversation)
    if open_summary is not None:
        if open_summary.content != content:
            message_content_replace(message=open_summary, content=content)
        _status_set(conversation, "confirming")
        return StopReason.AWAITING_USER_INPUT
    # One transaction: open tabs fetch the summary (on message_done, after commit) already
    # knowing it is the summary.
    with transaction.atomic():
        message = message_create(
            conversation=conversation, role=Role.ASSISTANT, content=content, run=run
        )
        _status_set(conversation, "confirming", summary_questionnaire_id=f"{message.pk}_q1")
    return StopReason.AWAITING_USER_INPUT


def _post_change_card(conversation: Conversation, definition: Definition, run: Run) -> str:
    """ "I want to change something": which answers, as a card of its own (only questions
    the person is shown are ever part of an answer)."""
    view = state_view(state_of(conversation))
    card: dict[str, Json] = {
        "title": definition.texts["correct_title"],
        "questions": [
            {
                "id": "change",
                "type": "multi_choice",
                "text": definition.texts["correct_question"],
                "options": [
                    {"value": s.field, "label": s.label}
                    for s in _applicable(definition, view["consultation_state"])
                ],
                "default": [],
            }
        ],
    }
    content = definition.texts["correct_intro"] + "\n\n" + _card(card)
    with transaction.atomic():
        message = message_create(
            conversation=conversation, role=Role.ASSISTANT, content=content, run=run
        )
        _status_set(conversation, "confirming", change_questionnaire_id=f"{message.pk}_q1")
    return StopReason.AWAITING_USER_INPUT


def _card(questionnaire: Mapping[str, Json]) -> str:
    """An inline card in the XML+JSON form: option values stay stable identifiers (the
    answer names `yes`, not a label in the person's language), and a single choice may
    start with nothing chosen."""
    body = json.dumps(questionnaire, ensure_ascii=False, separators=(",", ":"))
    return "<questionnaire>" + body.replace("</", "<\\/") + "</questionnaire>\n"


def _open_summary(conversation: Conversation) -> Message | None:
    """The summary message while its card can still be answered, else None."""
    qid = str(intake_state(conversation).get("summary_questionnaire_id", ""))
    pk, _sep, ordinal = qid.rpartition("_")
    if not pk.isdigit() or ordinal != "q1":
        return None
    message = conversation.messages.filter(pk=int(pk)).first()
    latest = core_selectors.message_latest_visible_assistant_seq(conversation=conversation)
    if message is None or latest != message.seq:
        return None
    return message


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

"""Reads for structured collection: find asks, their answers, and which may be answered."""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.metadata import AskPayload, metadata_of
from chat.core.models import Conversation, Message, Role
from questionnaires.asks.definitions import slot_ask_for_conversation
from questionnaires.asks.models import KIND_NAME, StructuredAnswer
from questionnaires.repair.selectors import carried


def is_ask(message: Message) -> bool:
    return message.role == Role.ASSISTANT and "ask_user_options" in metadata_of(message)


def ask_find(*, conversation: Conversation, turn_id: str, field: str) -> Message:
    """The ask of `turn_id` that collects `field`; 404 `ask_not_found` otherwise."""
    candidates = conversation.messages.filter(role=Role.ASSISTANT, metadata__turn_id=turn_id)
    for message in candidates.order_by("-seq"):
        ask = metadata_of(message).get("ask_user_options")
        if is_ask(message) and ask is not None and ask.get("field") == field:
            return message
    raise ChatError(
        "ask_not_found",
        _("No question for field “%(field)s” in turn “%(turn)s”.")
        % {"field": field, "turn": turn_id},
        status=404,
    )


def ask_get(*, conversation: Conversation, message_id: int | str) -> Message:
    try:
        message = conversation.messages.get(pk=message_id)
    except (Message.DoesNotExist, ValueError, TypeError):
        message = None
    if message is None or not is_ask(message):
        raise ChatError("ask_not_found", _("That question doesn't exist."), status=404)
    return message


def answer_for_ask(*, ask_message: Message) -> StructuredAnswer | None:
    """The ask's latest answer (a change, issue 27, replaces the first), or None."""
    return StructuredAnswer.objects.filter(ask_message=ask_message).order_by("-id").first()


def _same_turn(message: Message, turn_id: str) -> bool:
    """Messages that don't supersede an ask of `turn_id`: its sibling asks, answers to
    them, and assistant messages with nothing visible."""
    meta = message.metadata or {}
    if message.role == Role.ASSISTANT:
        if "ask_user_options" in meta and meta.get("turn_id") == turn_id:
            return True
        return not message.content and not message.tool_calls
    if message.role == Role.USER:
        return (meta.get("structured_answer") or {}).get("turn_id") == turn_id
    return True


def latest_turn_asks(messages: Iterable[Message]) -> set[int]:
    """Ids of the asks that may still be answered: those of the latest turn, provided
    nothing but their own siblings and answers follows them (the cards' latest rule)."""
    ordered = [m for m in messages if not m.hidden and m.role != Role.TOOL]
    result: set[int] = set()
    turn_id = None
    for message in reversed(ordered):
        if turn_id is None:
            answer = metadata_of(message).get("structured_answer")
            if is_ask(message):
                turn_id = metadata_of(message).get("turn_id") or ""
            elif message.role == Role.USER and answer:
                turn_id = answer.get("turn_id") or ""
                continue
            elif _same_turn(message, "\0"):
                continue
            else:
                break
        if not _same_turn(message, turn_id):
            break
        if is_ask(message):
            result.add(message.pk)
    return result


def ask_is_answerable(*, conversation: Conversation, ask_message: Message) -> bool:
    later = conversation.messages.filter(seq__gte=ask_message.seq).order_by("seq")
    if ask_message.pk in latest_turn_asks(later):
        return True
    # Still waiting after the person digressed (conversation repair, issue 36, keeps its
    # wait open and shows it again below the reply).
    return carried(conversation_id=conversation.pk, ref=f"ask:{ask_message.pk}")


def ask_pending(*, conversation: Conversation) -> list[Message]:
    """Asks of the latest turn that are still unanswered, in order."""
    return ask_pending_before(conversation=conversation, seq=None)


def ask_pending_before(*, conversation: Conversation, seq: int | None) -> list[Message]:
    """Unanswered asks that were open just before message `seq` (None: now)."""
    messages = (
        conversation.messages.all() if seq is None else conversation.messages.filter(seq__lt=seq)
    )
    tail = list(messages.order_by("-seq")[:20])[::-1]
    ids = latest_turn_asks(tail)
    answered = set(
        StructuredAnswer.objects.filter(ask_message_id__in=ids).values_list(
            "ask_message_id", flat=True
        )
    )
    return [m for m in tail if m.pk in ids and m.pk not in answered]


def ask_for_field(*, conversation: Conversation, field: str) -> AskPayload | None:
    """The payload that describes `field`: its latest ask, else the intake definition's."""
    asks = conversation.messages.filter(role=Role.ASSISTANT).order_by("-seq")
    for message in asks.only("metadata", "role")[:200]:
        ask = metadata_of(message).get("ask_user_options")
        if ask and ask.get("field") == field:
            return ask

    return slot_ask_for_conversation(conversation, field)


def answers_by_ask(*, conversation: Conversation) -> dict[int, StructuredAnswer]:
    rows = StructuredAnswer.objects.filter(conversation=conversation, ask_message__isnull=False)
    return {row.ask_message_id: row for row in rows if row.ask_message_id is not None}


def ask_any(*, conversation: Conversation) -> bool:
    return conversation.messages.filter(
        role=Role.ASSISTANT, metadata__has_key="ask_user_options"
    ).exists()


def ask_open_for_drafts(conversation: Conversation, message_id: str) -> bool:
    """Whether `message_id` names an ask of this conversation that can still be answered
    (the registry's draft check)."""
    if not (message_id.isascii() and message_id.isdigit()) or len(message_id) > 18:
        return False
    message = conversation.messages.filter(pk=int(message_id)).first()
    if message is None or not is_ask(message) or answer_for_ask(ask_message=message) is not None:
        return False
    return ask_is_answerable(conversation=conversation, ask_message=message)


def questions_asked(conversation: Conversation) -> int:
    """Asks the agent showed (one question each): its part of the question budget."""
    return sum(
        1
        for m in conversation.messages.filter(role=Role.ASSISTANT, hidden=False).only("metadata")
        if "ask_user_options" in metadata_of(m)
    )


def ask_siblings_open(conversation: Conversation, message: Message) -> list[str]:
    """The waits an answer `message` leaves open: the other asks of the turn the answered
    ask belongs to (asked one at a time, the next one opens now: still to be answered)."""
    answer = metadata_of(message).get("structured_answer")
    if not answer or not answer.get("turn_id"):
        return []
    siblings = (
        Message.objects.filter(
            conversation_id=conversation.pk,
            role=Role.ASSISTANT,
            metadata__turn_id=answer["turn_id"],
            metadata__has_key="ask_user_options",
        )
        .exclude(metadata__ask_user_options__field=answer.get("field"))
        .values_list("pk", flat=True)
    )
    return [f"{KIND_NAME}:{pk}" for pk in siblings]

""" "actually, make it X" / "不对，是X": the person's words change their latest answer
(conversation repair, issue 36) through each kind's existing change-answer path (issue
27), so the record is the same as after "Change answer" on the card: a new version that
`amends` the earlier one, `provenance: "amended"`, the words kept.

The registry has no change hook yet, so the two kinds that can change an answer are named
here, each with its own few lines (`CHANGERS`); a kind that gains a `change` hook can
replace its entry. A kind not listed is never amended in words (the reply is then read as
usual: an answer to what waits, or a digression).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.contrib.auth.models import User

from chat.core.metadata import metadata_of
from chat.core.models import PERSON_WAITS, Conversation, Message, Role, Wait, WaitStatus
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.protocol.repair import Match, match_reply


@dataclass(frozen=True)
class Amended:
    """The change made: the user message that carries it."""

    message: Message | None
    ref: str
    kind: str
    payload: Mapping[str, JsonValue]


def _latest_user_message(conversation: Conversation) -> Message | None:
    return conversation.messages.filter(role=Role.USER).order_by("-seq").first()


def _ask(
    conversation: Conversation, message: Message, words: str, typed: str, user: User, lang: str
) -> Mapping[str, JsonValue] | None:
    from questionnaires.asks import selectors, services
    from questionnaires.asks.interrupts import response_schema
    from questionnaires.asks.resolve import Source

    ask = metadata_of(message).get("ask_user_options")
    latest = selectors.answer_for_ask(ask_message=message)
    if not isinstance(ask, dict) or latest is None:
        return None
    found = match_reply(response_schema(ask), words)
    if found is None or "value" not in found.payload:
        return None
    services.ask_answer_change(
        conversation=conversation,
        ask_message=message,
        version=latest.pk,
        source=Source.FREE_TEXT,
        value=found.payload["value"],
        text=typed,
    )
    return found.payload


def _inline(
    conversation: Conversation, message: Message, words: str, typed: str, user: User, lang: str
) -> Mapping[str, JsonValue] | None:
    from questionnaires.inline import selectors
    from questionnaires.inline.interrupts import response_schema
    from questionnaires.inline.models import Submission
    from questionnaires.inline.services import questionnaire_answer

    latest = (
        Submission.objects.filter(conversation_id=conversation.pk, message_id=message.pk)
        .order_by("-version")
        .first()
    )
    if latest is None or latest.status != Submission.Status.SUBMITTED:
        return None
    questionnaire = selectors.questionnaires_of(
        conversation_id=conversation.pk, message=message, lang=lang
    ).get(latest.questionnaire_id)
    if questionnaire is None:
        return None
    found: Match | None = match_reply(response_schema(questionnaire), words)
    new = found.payload.get("answers") if found is not None else None
    if not isinstance(new, dict) or not new:
        return None
    answers = {**(latest.answers or {}), **new}
    questionnaire_answer(
        conversation=conversation,
        message_id=message.pk,
        questionnaire_id=latest.questionnaire_id,
        answers=answers,
        other_text={k: v for k, v in (latest.other_text or {}).items() if k not in new},
        user=user,
        lang=lang,
        skipped=[q for q in latest.skipped or () if q not in new],
        version=latest.version,
        touched=list(new),
        typed=dict.fromkeys(new, typed),
    )
    return found.payload if found is not None else None


Changer = Callable[[Conversation, Message, str, str, User, str], Mapping[str, JsonValue] | None]
CHANGERS: dict[str, Changer] = {"ask": _ask, "inline": _inline}


def amend_latest(
    *, conversation: Conversation, words: str, typed: str, user: User, lang: str
) -> Amended | None:
    """Change the person's latest answer to what `words` name, if they name one of its
    options (else None: nothing changed). Refusals are the change path's own (409 stale,
    400 unchanged)."""
    latest = (
        Wait.objects.filter(
            conversation_id=conversation.pk, status=WaitStatus.ANSWERED, kind__in=PERSON_WAITS
        )
        .order_by("-closed_at", "-id")
        .first()
    )
    if latest is None or latest.kind not in CHANGERS:
        return None
    prefix, _sep, pk = latest.ref.partition(":")
    if not pk.isdigit():
        return None
    message = conversation.messages.filter(pk=int(pk), role=Role.ASSISTANT).first()
    if message is None:
        return None
    payload = CHANGERS[latest.kind](conversation, message, words, typed, user, lang)
    if payload is None:
        return None
    return Amended(_latest_user_message(conversation), latest.ref, latest.kind, payload)

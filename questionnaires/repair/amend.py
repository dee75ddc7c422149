""" "actually, make it X" / "不对，是X": the person's words change their latest answer
(conversation repair, issue 36) through the answered card's kind (`Kind.amend`, each
kind's existing change-answer path, issue 27), so the record is the one "Change answer"
on the card makes: a new version that `amends` the earlier one, `provenance: "amended"`,
the words kept. A kind without the hook is never amended in words (the reply is then
read as usual: an answer to what waits, or a digression).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.contrib.auth.models import User

from chat.core.models import MCP_CALL_WAIT, Conversation, Message, Role, Wait, WaitStatus
from questionnaires.registry import kind_named


@dataclass(frozen=True)
class Amended:
    """The change made: the user message that carries it, and what was read."""

    message: Message | None
    ref: str
    kind: str
    payload: Mapping[str, object]


def amend_latest(
    *, conversation: Conversation, words: str, typed: str, user: User, lang: str
) -> Amended | None:
    """Change the person's latest answer to what `words` name, if they name something of
    it (else None: nothing changed). Refusals are the change path's own (409 stale, 400
    unchanged)."""
    latest = (
        Wait.objects.filter(conversation_id=conversation.pk, status=WaitStatus.ANSWERED)
        .exclude(kind=MCP_CALL_WAIT)
        .order_by("-closed_at", "-id")
        .first()
    )
    if latest is None:
        return None
    try:
        kind = kind_named(latest.kind)
    except KeyError:
        return None
    if kind.amend is None:
        return None
    payload = kind.amend(
        conversation=conversation, ref=latest.ref, words=words, typed=typed, user=user, lang=lang
    )
    if payload is None:
        return None
    message = conversation.messages.filter(role=Role.USER).order_by("-seq").first()
    return Amended(message, latest.ref, kind.name, payload)

"""Questionnaire analytics fixtures: inline cards with known outcomes and times (shared by
the outcome, admin and benchmark-free tests of `questionnaires.analytics`)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from chat.core.models import Message, Wait, WaitStatus
from chat.core.services import conversation_create, message_create
from questionnaires.inline.models import Submission
from questionnaires.protocol.names import OTHER_VALUE
from tests.support.asking import TRIP

T0 = timezone.now() - timedelta(hours=1)
LATER = T0 + timedelta(minutes=30)  # refreshes run "later": every row is past the lag


def at(message: Message, seconds: float = 0) -> Message:
    Message.objects.filter(pk=message.pk).update(created_at=T0 + timedelta(seconds=seconds))
    return message


def card(user, n: int, content: str = TRIP) -> tuple[object, Message]:
    conversation = conversation_create(owner=user, title=f"trip {n}", agent="echo")
    return conversation, at(
        message_create(conversation=conversation, role="assistant", content=content)
    )


def submit(conversation, message: Message, seconds: float, answers, other=None) -> None:
    sub = Submission.objects.create(
        conversation=conversation,
        message=message,
        questionnaire_id=f"{message.pk}_q1",
        answers=answers,
        other_text=other or {},
    )
    Submission.objects.filter(pk=sub.pk).update(created_at=T0 + timedelta(seconds=seconds))


def wait(conversation, ref: str, status: str) -> None:
    Wait.objects.create(
        conversation=conversation,
        owner=conversation.owner,
        kind="inline",
        ref=ref,
        status=status,
        deadline=T0 + timedelta(days=7),
        closed_at=None if status == WaitStatus.OPEN else T0 + timedelta(seconds=90),
    )


def trip_cards(user):
    """Five trip cards: answered in 10 s (Q3 left empty), answered in 30 s with "Other"
    for Q1 and nothing for Q2, abandoned (the person wrote something else), expired, open."""
    c1, m1 = card(user, 1)
    submit(c1, m1, 10, {"q1": "Paris", "q2": ["Train"], "q3": ""})
    c2, m2 = card(user, 2)
    submit(c2, m2, 30, {"q1": OTHER_VALUE, "q2": [], "q3": "window seat"}, {"q1": "Berlin"})
    c3, m3 = card(user, 3)
    message_create(conversation=c3, role="user", content="never mind, tell me a joke")
    c4, m4 = card(user, 4)
    wait(c4, f"inline:{m4.pk}", WaitStatus.EXPIRED)
    c5, m5 = card(user, 5)
    wait(c5, f"inline:{m5.pk}", WaitStatus.OPEN)
    return [(c1, m1), (c2, m2), (c3, m3), (c4, m4), (c5, m5)]

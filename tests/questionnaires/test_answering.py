"""The one answer path (`questionnaires.answering`, issue 35): whatever the kind — here the
toy kind of the test tree and a probe kind, neither known to the product — an answer is
posted, locked in every tab, counted and its draft cleared; a refusal anywhere (the kind's
own, another card waiting, a unique constraint) leaves nothing stored and counts nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError
from prometheus_client import REGISTRY

from chat.core.errors import ChatError
from chat.core.models import Event, Message, Role
from chat.core.services import conversation_create, message_create
from questionnaires.answering import answer_record
from questionnaires.drafts import CardDraft
from questionnaires.inline.models import Submission
from questionnaires.inline.services import questionnaire_answer
from questionnaires.registry import Answering, AnswerPost, Kind, Recorded
from tests.support.asking import TRIP
from tests.support.toy_kind.kind import toy_answer, toy_ask

pytestmark = pytest.mark.django_db

TOY = "tests.support.toy_kind.kind.KIND"


def _probe_record(conversation, answer):
    """Writes a message, then hits a unique constraint (another tab was first)."""
    message_create(conversation=conversation, role=Role.ASSISTANT, content="half written")
    raise IntegrityError("unique constraint failed")


def _probe_conflict(conversation, answer):
    return ChatError("probe_taken", f"{answer} was answered meanwhile.", status=409)


PROBE = Kind(
    name="probe",
    label="Probe",
    answering=Answering(record=_probe_record, conflict=_probe_conflict),
)
MUTE = Kind(name="mute", label="Mute")
LINKED: list[Message] = []
ENVELOPE = Kind(
    name="envelope",
    label="Envelope",
    answering=Answering(
        record=lambda conversation, answer: Recorded(
            row=None,
            post=AnswerPost(
                content='{"type":"probe"}', display="Probed", metadata={"kind": "envelope"}
            ),
            link=LINKED.append,
        )
    ),
)


@pytest.fixture
def kinds_registered(settings):
    here = "tests.questionnaires.test_answering"
    extra = [TOY, *(f"{here}.{name}" for name in ("PROBE", "MUTE", "ENVELOPE"))]
    settings.QUESTIONNAIRE_KINDS = [*settings.QUESTIONNAIRE_KINDS, *extra]
    settings.ROOT_URLCONF = "tests.support.toy_kind.root_urls"
    templates = Path(__file__).resolve().parents[1] / "support" / "toy_kind" / "templates"
    engine = settings.TEMPLATES[0]
    settings.TEMPLATES = [{**engine, "DIRS": [*engine["DIRS"], templates]}]


@pytest.fixture
def external(user):
    return conversation_create(owner=user, title="Toys", agent="external")


def _counted(kind: str, outcome: str) -> float:
    return REGISTRY.get_sample_value("chat_answers_total", {"kind": kind, "outcome": outcome}) or 0


def test_an_answer_is_posted_locked_counted_and_its_draft_cleared(
    kinds_registered, external, django_capture_on_commit_callbacks
):
    ask = toy_ask(conversation=external, question="Your favourite toy?")
    CardDraft.objects.create(
        user=external.owner, conversation=external, card=f"toy:{ask.pk}", fields={"text": ["a"]}
    )
    before = _counted("toy", "answered")
    with django_capture_on_commit_callbacks(execute=True):
        message = toy_answer(conversation=external, message_id=ask.pk, text="a kite")

    assert (message.role, message.content, message.seq) == (Role.USER, "a kite", ask.seq + 1)
    locked = Event.objects.filter(conversation=external, name="card_locked").get()
    assert locked.data == {"kind": "toy", "message_id": ask.pk}
    assert not CardDraft.objects.filter(conversation=external).exists()
    assert _counted("toy", "answered") == before + 1


def test_the_kinds_refusal_stores_nothing_and_counts_nothing(
    kinds_registered, external, django_capture_on_commit_callbacks
):
    ask = toy_ask(conversation=external, question="Your favourite toy?")
    CardDraft.objects.create(
        user=external.owner, conversation=external, card=f"toy:{ask.pk}", fields={"text": ["a"]}
    )
    before = _counted("toy", "answered")
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ChatError) as refused:
        toy_answer(conversation=external, message_id=ask.pk + 1000, text="a kite")

    assert (refused.value.code, refused.value.status) == ("toy_not_pending", 409)
    assert not external.messages.filter(role=Role.USER).exists()
    assert not Event.objects.filter(conversation=external, name="card_locked").exists()
    assert CardDraft.objects.filter(conversation=external).count() == 1  # what was typed stays
    assert _counted("toy", "answered") == before


def test_a_card_waiting_elsewhere_refuses_the_answer_and_nothing_is_stored(
    kinds_registered, conversation, user
):
    """The rule across kinds, on the one path: an inline card answered while a toy card
    holds the conversation is refused with the toy's 409, after the card's own checks."""
    toy_ask(conversation=conversation, question="Your favourite toy?")
    card = message_create(conversation=conversation, role=Role.ASSISTANT, content=TRIP)
    with pytest.raises(ChatError) as refused:
        questionnaire_answer(
            conversation=conversation,
            message_id=card.pk,
            questionnaire_id=f"{card.pk}_q1",
            answers={"q1": "Rome", "q2": [], "q3": ""},
            other_text={},
            user=user,
            lang="en",
        )

    assert (refused.value.code, refused.value.status) == ("pending_toy", 409)
    assert not Submission.objects.exists()
    assert not conversation.messages.filter(role=Role.USER).exists()
    assert not Event.objects.filter(conversation=conversation, name="card_locked").exists()


def test_a_unique_constraint_becomes_the_kinds_conflict_and_rolls_back(
    kinds_registered, conversation
):
    messages = Message.objects.count()
    with pytest.raises(ChatError) as refused:
        answer_record(conversation=conversation, kind="probe", answer="q1")

    assert (refused.value.code, refused.value.status) == ("probe_taken", 409)
    assert refused.value.message == "q1 was answered meanwhile."
    assert Message.objects.count() == messages  # the half-written row went with it


def test_a_kind_without_an_answer_path_is_a_configuration_error(kinds_registered, conversation):
    with pytest.raises(ImproperlyConfigured, match="mute"):
        answer_record(conversation=conversation, kind="mute", answer=None)


def test_a_posted_answer_carries_the_kinds_envelope_and_display(kinds_registered, conversation):
    """What a kind's `record` returns is what is posted (content, display, metadata; no
    lock event when it has none), and the posted message is handed to its `link`."""
    LINKED.clear()
    answered = answer_record(conversation=conversation, kind="envelope", answer=None)

    assert answered.message is not None and [answered.message] == LINKED
    stored = Message.objects.get(pk=answered.message.pk)
    assert (stored.content, stored.display_content) == ('{"type":"probe"}', "Probed")
    assert stored.metadata == {"kind": "envelope"}
    assert not Event.objects.filter(conversation=conversation, name="card_locked").exists()

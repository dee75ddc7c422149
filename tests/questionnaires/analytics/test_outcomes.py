"""Questionnaire analytics: what each card shown became, counted per definition (a small
fixture of every kind, with known times), and kept right across refreshes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.core.models import Message, Run, Wait, WaitStatus
from chat.core.services import conversation_create, message_create
from questionnaires.analytics.fingerprint import DefinitionSpec, QuestionSpec
from questionnaires.analytics.models import CardDefinition, CardInstance, DefinitionQuestion
from questionnaires.analytics.refresh import analytics_rebuild, analytics_refresh
from questionnaires.asks.models import StructuredAnswer
from questionnaires.elicitations.models import Elicitation, ElicitationStatus
from questionnaires.forms.models import FormStatus, InteractiveForm
from tests.support.analytics import LATER, T0, at, card, submit
from tests.support.asking import SCHEMA, SPEC_PAYLOAD, TRIP, open_form

pytestmark = pytest.mark.django_db


def _questions(definition) -> dict[str, DefinitionQuestion]:
    return {q.question_id: q for q in definition.questions.all()}


def test_inline_cards_of_one_definition_are_counted_together(trips):
    result = analytics_refresh(now=LATER)
    assert result.created == 5
    definition = CardDefinition.objects.get()
    assert definition.kind == "inline" and definition.title == "Trip plan"
    assert definition.question_count == 3
    counts = (
        definition.shown_count,
        definition.answered_count,
        definition.abandoned_count,
        definition.expired_count,
        definition.open_count,
        definition.skipped_count,
        definition.declined_count,
    )
    assert counts == (5, 2, 1, 1, 1, 0, 0)
    assert definition.median_seconds == pytest.approx(20.0)  # 10 s and 30 s
    questions = _questions(definition)
    assert [(q.responses, q.skipped, q.other) for q in questions.values()] == [
        (2, 0, 1),  # Where to? "Other: Berlin" once
        (2, 1, 0),  # Transport? left empty once
        (2, 1, 0),  # Anything else? left empty once
    ]
    assert [q.has_options for q in questions.values()] == [True, True, False]
    assert definition.first_shown == T0 and definition.last_shown == T0


def test_an_open_card_settles_on_a_later_refresh_and_nothing_counts_twice(trips):
    analytics_refresh(now=LATER)
    c5, m5 = trips[4]
    submit(c5, m5, 50, {"q1": "Rome", "q2": ["Car"], "q3": "x"})
    Wait.objects.filter(ref=f"inline:{m5.pk}").update(status=WaitStatus.ANSWERED)
    result = analytics_refresh(now=LATER)
    assert (result.created, result.settled) == (0, 1)
    assert analytics_refresh(now=LATER).settled == 0
    definition = CardDefinition.objects.get()
    assert (definition.shown_count, definition.answered_count, definition.open_count) == (5, 3, 0)
    assert definition.median_seconds == pytest.approx(30.0)  # 10, 30, 50
    assert _questions(definition)["q1"].responses == 3
    before = CardDefinition.objects.values().get()
    analytics_rebuild()  # from scratch: the same numbers
    after = CardDefinition.objects.values().get()
    assert {k: v for k, v in before.items() if k != "id"} == {
        k: v for k, v in after.items() if k != "id"
    }


def test_the_cursor_rereads_rows_younger_than_the_lag(user):
    conversation, message = card(user, 1)
    Message.objects.filter(pk=message.pk).update(created_at=timezone.now())
    analytics_refresh()
    analytics_refresh()  # read again (young), recorded once
    assert CardInstance.objects.count() == 1
    assert CardDefinition.objects.get().shown_count == 1


def test_a_card_whose_conversation_is_deleted_ends_abandoned(trips):
    analytics_refresh(now=LATER)
    trips[4][0].delete()
    analytics_refresh(now=LATER)
    definition = CardDefinition.objects.get()
    assert (definition.open_count, definition.abandoned_count, definition.shown_count) == (0, 2, 5)


def _ask(user, n: int) -> tuple[object, Message]:
    conversation = conversation_create(owner=user, title=f"ask {n}", agent="intake")
    message = message_create(
        conversation=conversation,
        role="assistant",
        content=SPEC_PAYLOAD["question"],
        metadata={"ask_user_options": SPEC_PAYLOAD, "turn_id": f"t{n}"},  # type: ignore[typeddict-item]
    )
    return conversation, at(message)


def _answer(conversation, message, source: str, seconds: float) -> None:
    row = StructuredAnswer.objects.create(
        conversation=conversation,
        ask_message=message,
        turn_id="t",
        field="pain_level",
        value=None,
        source=source,
    )
    StructuredAnswer.objects.filter(pk=row.pk).update(created_at=T0 + timedelta(seconds=seconds))


def test_asks_count_skips_and_typed_answers(user):
    c1, m1 = _ask(user, 1)
    _answer(c1, m1, StructuredAnswer.Source.OPTION_CLICK, 4)
    c2, m2 = _ask(user, 2)
    _answer(c2, m2, StructuredAnswer.Source.FREE_TEXT, 8)
    c3, m3 = _ask(user, 3)
    _answer(c3, m3, StructuredAnswer.Source.SKIPPED, 2)
    analytics_refresh(now=LATER)
    definition = CardDefinition.objects.get()
    assert definition.kind == "ask" and definition.source == "pain_level"
    assert (definition.shown_count, definition.answered_count, definition.skipped_count) == (
        3,
        2,
        1,
    )
    assert definition.median_seconds == pytest.approx(6.0)  # the skip is no answer
    (question,) = definition.questions.all()
    assert (question.responses, question.skipped, question.other) == (3, 1, 1)


def test_forms_and_elicitations_count_declines_and_cancels(user):
    conversation = conversation_create(owner=user, title="f", agent="scripted")
    open_form(conversation, tool_use_id="call_a")
    form = InteractiveForm.objects.get()
    InteractiveForm.objects.filter(pk=form.pk).update(
        status=FormStatus.CANCELLED, answered_at=timezone.now()
    )
    other = conversation_create(owner=user, title="g", agent="scripted")
    open_form(other, tool_use_id="call_b")
    answered = InteractiveForm.objects.get(conversation=other)
    InteractiveForm.objects.filter(pk=answered.pk).update(
        status=FormStatus.ANSWERED,
        answered_at=answered.created_at + timedelta(seconds=12),
        answer={"answers": {"color": "red", "extras": [], "name": "Ann"}, "message": ""},
    )

    def elicitation(status: str, by_person: bool) -> None:
        message = message_create(conversation=conversation, role="assistant", content="q")
        Elicitation.objects.create(
            conversation=conversation,
            message=message,
            server_name="demo",
            tool_name="book_room",
            mode="form",
            prompt="Who is coming?",
            requested_schema=SCHEMA,
            status=status,
            answered_by=user if by_person else None,
            answered_at=timezone.now(),
            expires_at=timezone.now() + timedelta(minutes=30),
        )

    elicitation(ElicitationStatus.DECLINED, True)
    elicitation(ElicitationStatus.CANCELLED, True)  # the person's Cancel: a skip
    elicitation(ElicitationStatus.CANCELLED, False)  # Stop: abandoned
    elicitation(ElicitationStatus.REFUSED, False)  # never answerable: not shown
    analytics_refresh(now=timezone.now() + timedelta(minutes=5))
    forms = CardDefinition.objects.get(kind="form")
    assert (forms.shown_count, forms.declined_count, forms.answered_count) == (2, 1, 1)
    assert forms.median_seconds == pytest.approx(12.0)
    assert [(q.question_id, q.skipped) for q in forms.questions.all()] == [
        ("color", 0),
        ("extras", 1),
        ("name", 0),
    ]
    asked = CardDefinition.objects.get(kind="elicitation")
    assert asked.title == "Who is coming?" and asked.source == "demo · book_room"
    assert (
        asked.shown_count,
        asked.declined_count,
        asked.skipped_count,
        asked.abandoned_count,
    ) == (3, 1, 1, 1)
    assert asked.question_count == len(SCHEMA["properties"])


def test_self_check_repairs_count_on_the_card_they_led_to(user):
    conversation = conversation_create(owner=user, title="r", agent="openai")
    run = Run.objects.create(conversation=conversation, status="finished")
    for attempt in (1, 2):
        message_create(
            conversation=conversation,
            role="assistant",
            content="```questionnaire\nbroken",
            hidden=True,
            metadata={"kind": "self_check_failed", "attempt": attempt, "issues": []},
            run=run,
        )
        message_create(
            conversation=conversation,
            role="user",
            content="fix it",
            hidden=True,
            metadata={"kind": "self_check_diagnostic", "attempt": attempt},
            run=run,
        )
    at(message_create(conversation=conversation, role="assistant", content=TRIP, run=run))
    # A later card of another run needed no repair.
    card(user, 2)
    analytics_refresh(now=timezone.now() + timedelta(minutes=5))
    definition = CardDefinition.objects.get()
    assert (definition.shown_count, definition.repaired_count, definition.repair_attempts) == (
        2,
        1,
        2,
    )


def test_the_fingerprint_ignores_wrapping_but_not_wording():
    def spec(text: str, options=(("a", "A"), ("b", "B"))) -> DefinitionSpec:
        return DefinitionSpec(
            "inline", "Trip", (QuestionSpec("q1", text, "single_choice", options),)
        )

    assert spec("Where  to?\n").fingerprint() == spec("Where to?").fingerprint()
    assert spec("Where to go?").fingerprint() != spec("Where to?").fingerprint()
    assert spec("Where to?", (("a", "A"),)).fingerprint() != spec("Where to?").fingerprint()
    other_kind = DefinitionSpec("ask", "Trip", spec("Where to?").questions)
    assert other_kind.fingerprint() != spec("Where to?").fingerprint()


def test_readonly_cards_are_not_counted(user):
    conversation = conversation_create(owner=user, title="ro", agent="echo")
    message_create(conversation=conversation, role="assistant", content=TRIP, readonly=True)
    analytics_refresh(now=timezone.now() + timedelta(minutes=5))
    assert not CardDefinition.objects.exists()


def test_the_command_and_the_beat_task_refresh(user, settings):
    from io import StringIO

    from django.core.management import call_command

    from chat.runs.tasks import analytics_refresh_task

    assert settings.CELERY_BEAT_SCHEDULE["analytics-refresh"]["task"] == "chat.analytics_refresh"
    conversation, message = card(user, 1)
    out = StringIO()
    call_command("analytics_refresh", stdout=out)
    assert out.getvalue().startswith("1 new cards, 0 settled")
    submit(conversation, message, 5, {"q1": "Rome"})
    message_create(conversation=conversation, role="user", content="Rome")  # as answer_post
    assert analytics_refresh_task() == 1  # settled
    out = StringIO()
    call_command("analytics_refresh", "--rebuild", stdout=out)
    assert out.getvalue().startswith("1 new cards, 0 settled")
    assert CardDefinition.objects.get().answered_count == 1


def test_only_open_cards_whose_rows_changed_are_read_again(trips, monkeypatch):
    from questionnaires.analytics import outcomes

    analytics_refresh(now=LATER)
    read: list[set[str]] = []
    real = outcomes.refs_observe
    monkeypatch.setattr(outcomes, "refs_observe", lambda refs: read.append(set(refs)) or real(refs))
    analytics_refresh(now=LATER)  # nothing happened: nothing parsed again
    assert read == [set()]
    c5, m5 = trips[4]
    message_create(conversation=c5, role="user", content="later")
    analytics_refresh(now=LATER)
    assert read[-1] == {f"inline:{m5.pk}:{m5.pk}_q1"}
    assert CardDefinition.objects.get().abandoned_count == 2
    # Once an hour every open card is read again, whatever changed.
    c1, m1 = card(trips[0][0].owner, 9)
    analytics_refresh(now=LATER)
    analytics_refresh(now=LATER + timedelta(hours=2))
    assert f"inline:{m1.pk}:{m1.pk}_q1" in read[-1]


def test_a_hostile_schema_never_stops_the_refresh(user):
    conversation = conversation_create(owner=user, title="h", agent="scripted")
    long = "p" * 250
    schema = {
        "type": "object",
        "properties": {long + "a": {"type": "string"}, long + "b": {"type": "string"}},
    }
    message = message_create(conversation=conversation, role="assistant", content="q")
    Elicitation.objects.create(
        conversation=conversation,
        message=message,
        server_name="evil",
        mode="form",
        prompt="=cmd|' /C calc'!A0",
        requested_schema=schema,
        status=ElicitationStatus.ACCEPTED,
        content={long + "a": "x"},
        answered_at=timezone.now(),
        expires_at=timezone.now() + timedelta(minutes=30),
    )
    analytics_refresh(now=timezone.now() + timedelta(minutes=5))
    definition = CardDefinition.objects.get()
    assert definition.answered_count == 1 and definition.question_count == 2
    assert definition.questions.count() == 1  # the cut ids met: the first one counts


def test_a_budget_stops_reading_sources_and_says_more(user):
    for n in range(3):
        card(user, n)
    result = analytics_refresh(now=LATER, limit=1, budget=0.0)
    assert result.more and result.created == 1
    result = analytics_refresh(now=LATER, limit=1)
    assert not result.more and CardDefinition.objects.get().shown_count == 3


def test_a_declined_card_counts_as_declined_and_a_change_keeps_the_first_outcome(user):
    """Issue 27: "I'd rather not answer" is a decline; "Change answer" versions correct the
    first answer, they are not more outcomes."""
    from questionnaires.inline.models import Submission

    c1, m1 = card(user, 1)
    Submission.objects.create(
        conversation=c1, message=m1, questionnaire_id=f"{m1.pk}_q1", status="declined"
    )
    c2, m2 = card(user, 2)
    submit(c2, m2, 10, {"q1": "Rome", "q2": ["Car"], "q3": "x"})
    Submission.objects.create(
        conversation=c2,
        message=m2,
        questionnaire_id=f"{m2.pk}_q1",
        version=2,
        answers={"q1": "Paris", "q2": ["Car"], "q3": "x"},
    )
    analytics_refresh(now=LATER)
    definition = CardDefinition.objects.get()
    assert (definition.shown_count, definition.answered_count, definition.declined_count) == (
        2,
        1,
        1,
    )
    assert definition.median_seconds == pytest.approx(10.0)  # the first answer's time


def test_a_queued_ask_stays_open_while_the_one_before_it_is_answered(user):
    """Two asks of one turn are asked one at a time: answering the first is a new user
    message, but the second still waits to be answered (issue 32, defect 12) — its wait
    stays open and analytics count it open, not abandoned."""
    from questionnaires.asks import services as asks

    # an external agent: nothing answers the answers (an intake would ask on at once)
    conversation = conversation_create(owner=user, title="two asks", agent="external")
    side = {
        "question": "Which knee?",
        "field": "knee_side",
        "options": [{"label": "Left", "value": "left"}, {"label": "Right", "value": "right"}],
    }
    first = asks.ask_create(conversation=conversation, payload=side, turn_id="t1")
    second = asks.ask_create(conversation=conversation, payload=SPEC_PAYLOAD, turn_id="t1")
    assert first is not None and second is not None
    asks.ask_answer(
        conversation=conversation,
        answer={"field": "knee_side", "turn_id": "t1", "value": "left"},
    )
    waits = dict(Wait.objects.values_list("ref", "status"))
    assert waits == {f"ask:{first.pk}": WaitStatus.ANSWERED, f"ask:{second.pk}": WaitStatus.OPEN}
    analytics_refresh(now=timezone.now() + timedelta(hours=1))
    outcomes = dict(CardInstance.objects.values_list("ref", "outcome"))
    assert outcomes == {f"ask:{first.pk}": "answered", f"ask:{second.pk}": "open"}
    # answered in its turn, it counts as answered — once
    asks.ask_answer(
        conversation=conversation,
        answer={"field": "pain_level", "turn_id": "t1", "value": "mild"},
    )
    analytics_refresh(now=timezone.now() + timedelta(hours=1))
    pain = CardDefinition.objects.get(source="pain_level")
    assert (pain.shown_count, pain.answered_count, pain.abandoned_count, pain.open_count) == (
        1,
        1,
        0,
        0,
    )


def test_a_queued_ask_is_not_shown_until_the_one_before_it_is_settled(user):
    """The page shows a turn's asks one at a time: the second is not shown, nor counted
    anywhere, while the first waits (issue 32 defect 12: it counted as shown from the
    moment it was queued); once the first is answered it is shown from that moment."""
    from questionnaires.asks import services as asks

    conversation = conversation_create(owner=user, title="queued", agent="external")
    side = {
        "question": "Which knee?",
        "field": "knee_side",
        "options": [{"label": "Left", "value": "left"}, {"label": "Right", "value": "right"}],
    }
    first = asks.ask_create(conversation=conversation, payload=side, turn_id="t1")
    second = asks.ask_create(conversation=conversation, payload=SPEC_PAYLOAD, turn_id="t1")
    assert first is not None and second is not None
    later = timezone.now() + timedelta(hours=1)
    analytics_refresh(now=later)
    outcomes = dict(CardInstance.objects.values_list("ref", "outcome"))
    assert outcomes == {f"ask:{first.pk}": "open", f"ask:{second.pk}": "queued"}
    pain = CardDefinition.objects.get(source="pain_level")
    assert (pain.shown_count, pain.open_count) == (0, 0)
    assert CardDefinition.objects.get(source="knee_side").shown_count == 1

    asks.ask_answer(
        conversation=conversation,
        answer={"field": "knee_side", "turn_id": "t1", "value": "left"},
    )
    answered_at = StructuredAnswer.objects.get(field="knee_side").created_at
    analytics_refresh(now=later)
    second_card = CardInstance.objects.get(ref=f"ask:{second.pk}")
    assert second_card.outcome == "open" and second_card.shown_at == answered_at
    pain.refresh_from_db()
    assert (pain.shown_count, pain.open_count) == (1, 1)
    asks.ask_answer(
        conversation=conversation,
        answer={"field": "pain_level", "turn_id": "t1", "value": "mild"},
    )
    analytics_refresh(now=later)
    pain.refresh_from_db()
    assert (pain.shown_count, pain.answered_count, pain.open_count) == (1, 1, 0)
    # and a rebuild from the rows says the same
    analytics_rebuild()
    pain = CardDefinition.objects.get(source="pain_level")
    assert (pain.shown_count, pain.answered_count, pain.open_count) == (1, 1, 0)


def test_a_queued_ask_of_a_deleted_conversation_leaves_no_trace(user):
    from questionnaires.asks import services as asks

    conversation = conversation_create(owner=user, title="gone", agent="external")
    side = {"question": "Which?", "field": "side", "options": [{"label": "A", "value": "a"},
            {"label": "B", "value": "b"}]}  # fmt: skip
    asks.ask_create(conversation=conversation, payload=side, turn_id="t1")
    asks.ask_create(conversation=conversation, payload=SPEC_PAYLOAD, turn_id="t1")
    analytics_refresh(now=timezone.now() + timedelta(hours=1))
    assert CardInstance.objects.filter(outcome="queued").count() == 1
    conversation.delete()
    analytics_refresh(now=timezone.now() + timedelta(hours=2))
    assert not CardInstance.objects.filter(outcome="queued").exists()
    pain = CardDefinition.objects.get(source="pain_level")
    assert (pain.shown_count, pain.abandoned_count) == (0, 0)

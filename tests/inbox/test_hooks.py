"""The registry hooks the inbox stands on: `locate` for every kind, `Pending.choices` for
short questions, and inline `resolve`'s `touched` (a click is never "kept the default")."""

from __future__ import annotations

import pytest

from chat.core.errors import ChatError

pytestmark = pytest.mark.django_db


def test_inline_choices_only_for_one_single_choice_and_touched_is_checked(
    second, inline_card, user
):
    from questionnaires.inline.interrupts import inline_pending, inline_resolve
    from questionnaires.inline.models import Submission

    ref = f"inline:{inline_card.pk}"
    pending = inline_pending(second, ref)
    assert [c.payload for c in pending.choices] == [
        {"answers": {"q1": "Soup"}, "touched": ["q1"]},
        {"answers": {"q1": "Salad"}, "touched": ["q1"]},
    ]
    assert "touched" in pending.response_schema["properties"]
    with pytest.raises(ChatError) as refused:
        inline_resolve(
            conversation=second,
            ref=ref,
            payload={"answers": {"q1": "Soup"}, "touched": "q1"},
            user=user,
            lang="en",
        )
    assert refused.value.code == "interrupt_payload_invalid"
    assert not Submission.objects.exists()


def test_a_machine_client_that_does_not_say_touched_keeps_the_default(second, inline_card, user):
    from questionnaires.inline.interrupts import inline_resolve

    inline_resolve(
        conversation=second,
        ref=f"inline:{inline_card.pk}",
        payload={"answers": {"q1": "Soup"}},
        user=user,
        lang="en",
    )
    envelope = second.messages.filter(role="user").last().content
    assert '"provenance":"default"' in envelope  # as before: only a reported touch is chosen


def test_a_card_of_several_questions_has_no_one_click_answer(conversation):
    from chat.core.models import Role
    from chat.core.services import message_create
    from questionnaires.inline.interrupts import inline_locate, inline_pending
    from tests.support.asking import TRIP

    message = message_create(conversation=conversation, role=Role.ASSISTANT, content=TRIP)
    ref = f"inline:{message.pk}"
    assert inline_pending(conversation, ref).choices == ()
    where = inline_locate(conversation, ref)
    assert where.message_id == message.pk and where.title == "Trip plan"
    assert inline_locate(conversation, "ask:1") is None
    assert inline_locate(conversation, f"inline:{message.pk + 99}") is None


def test_locate_refuses_other_refs_and_closed_cards(external):
    from questionnaires.asks.interrupts import ask_locate
    from questionnaires.elicitations.selectors import elicitation_locate
    from questionnaires.forms.selectors import form_locate

    for locate in (ask_locate, form_locate, elicitation_locate):
        assert locate(external, "nonsense") is None
        assert locate(external, "x:1") is None
    assert form_locate(external, "form:999999") is None
    assert elicitation_locate(external, "elicitation:999999") is None

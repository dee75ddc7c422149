"""The inbox's reads: every waiting question of the person, described through the kinds'
registry hooks; never another person's."""

from __future__ import annotations

import pytest

from tests.inbox.conftest import YESNO

pytestmark = pytest.mark.django_db


def test_every_waiting_question_across_conversations_newest_first(user, ask, inline_card):
    from chat.inbox.selectors import inbox_count, inbox_items

    message = ask()
    items = inbox_items(user=user)
    assert [i.ref for i in items] == [f"ask:{message.pk}", f"inline:{inline_card.pk}"]
    pain, lunch = items
    assert pain.title == "How bad is the pain?" and pain.kind == "ask"
    assert pain.conversation_title == "Knee check" and pain.agent == "external"
    assert pain.url.endswith(f"/conversations/{message.conversation_id}/#ask-{message.pk}")
    assert [c.label for c in pain.choices] == ["None", "Mild"]
    assert lunch.title == "Lunch" and lunch.anchor.startswith("qc-")
    assert [c.label for c in lunch.choices] == ["Soup", "Salad"]
    assert inbox_count(user=user) == 2


def test_filters_by_conversation_and_kind(user, ask, inline_card, external):
    from chat.inbox.selectors import inbox_items

    ask()
    assert [i.kind for i in inbox_items(user=user, conversation_id=external.pk)] == ["ask"]
    assert [i.kind for i in inbox_items(user=user, kind="inline")] == ["inline"]
    assert inbox_items(user=user, conversation_id=external.pk, kind="inline") == []


def test_another_persons_questions_never_appear(user, other_user, ask):
    from chat.core.services import conversation_create
    from chat.inbox.selectors import inbox_count, inbox_item, inbox_items

    theirs = conversation_create(owner=other_user, title="Theirs", agent="external")
    message = ask(conversation=theirs)
    assert inbox_items(user=user) == [] and inbox_count(user=user) == 0
    assert inbox_item(user=user, ref=f"ask:{message.pk}") is None
    assert [i.ref for i in inbox_items(user=other_user)] == [f"ask:{message.pk}"]


def test_a_yes_no_has_two_choices_a_long_list_none(user, ask):
    from chat.inbox.selectors import inbox_items
    from tests.support.asking import options

    ask(YESNO)
    ask({"question": "Which?", "field": "which", "options": options(8)}, turn_id="turn_2")
    many, yesno = inbox_items(user=user)
    assert [c.payload for c in yesno.choices] == [{"value": True}, {"value": False}]
    assert many.choices == ()


def test_forms_and_elicitations_are_listed_with_who_asks(user, external):
    from chat.inbox.selectors import inbox_items
    from tests.support.asking import open_elicitation, open_form

    open_form(external, questions=[{"id": "c", "question": "Colour?", "input_type": "text"}])
    open_elicitation(external)
    kinds = {i.kind: i for i in inbox_items(user=user)}
    assert kinds["form"].title == "Colour?" and kinds["form"].anchor.startswith("form-")
    assert kinds["elicitation"].asker == "demo"
    assert kinds["elicitation"].title == "Who is coming?"
    assert kinds["elicitation"].choices == () and kinds["form"].choices == ()


def test_asks_of_one_turn_the_later_ones_are_queued_and_not_answerable_in_place(user, ask):
    from chat.inbox.selectors import inbox_items

    first = ask(turn_id="turn_9")
    second = ask(YESNO, turn_id="turn_9")
    items = {i.ref: i for i in inbox_items(user=user)}
    now, later = items[f"ask:{first.pk}"], items[f"ask:{second.pk}"]
    assert not now.queued and now.choices
    assert later.queued and later.choices == ()

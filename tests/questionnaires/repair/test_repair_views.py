"""Conversation repair through the page, without JavaScript (plain form posts), with the
offline intake's island trip (asks) and an inline card: issue 36, item 1."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.urls import reverse

from chat.core.models import Message, Role, Wait, WaitStatus
from chat.core.services import conversation_create, message_create
from chat.core.waits import wait_open
from chat.usecases import intake_begin
from questionnaires.asks.models import StructuredAnswer
from questionnaires.inline.models import Submission
from questionnaires.protocol.repair import fields_of
from questionnaires.registry import kind_named
from questionnaires.repair.models import Repair, RepairOutcome

pytestmark = pytest.mark.django_db

ISLAND_CARD = """Where to?

```questionnaire
title: Your trip
questions:
  - type: single_choice
    text: Which island?
    options:
      - Canaries
      - Madeira
      - Azores
    default: Madeira
```
"""


@pytest.fixture
def trip(user):
    conversation = conversation_create(owner=user, agent="intake", language="en")
    intake_begin(conversation=conversation, definition_id="trip")
    return conversation


@pytest.fixture
def inline_card(user):
    """An assistant message with a card, waiting like the one a turn ends on."""
    conversation = conversation_create(owner=user, agent="echo", language="en")
    message_create(conversation=conversation, role=Role.USER, content="Plan a trip")
    card = message_create(conversation=conversation, role=Role.ASSISTANT, content=ISLAND_CARD)
    wait_open(conversation=conversation, kind="inline", ref=f"inline:{card.pk}", seconds=600)
    return conversation, card


def _send(client, conversation, text):
    url = reverse("chat:message_send", args=[conversation.pk])
    return client.post(url, {"content": text})


def _page(client, conversation):
    return client.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()


def _answer(field, conversation):
    return StructuredAnswer.objects.filter(conversation=conversation, field=field).first()


def test_typing_the_label_answers_the_waiting_ask_as_free_text(client_in, trip):
    response = _send(client_in, trip, "Canaries")
    assert response.status_code == 302
    answer = _answer("island", trip)
    assert answer.value == "canaries"
    assert answer.source == StructuredAnswer.Source.FREE_TEXT and answer.raw_text == "Canaries"
    row = Repair.objects.get(conversation=trip)
    assert row.outcome == RepairOutcome.ANSWERED and row.typed_text == "Canaries"
    # the intake moved on to the next question; no prompt is left below the thread
    html = _page(client_in, trip)
    assert "How many nights?" in html and 'data-repair="' not in html


def test_a_number_and_a_yes_answer_the_scale_and_the_yes_no_question(client_in, trip):
    _send(client_in, trip, "Madeira")
    _send(client_in, trip, "5")
    assert _answer("nights", trip).value == 5
    _send(client_in, trip, "yes")
    assert _answer("children", trip).value is True
    assert _answer("children", trip).source == StructuredAnswer.Source.FREE_TEXT


def test_words_containing_an_answer_fill_it_for_one_confirming_click(client_in, trip):
    before = Message.objects.filter(conversation=trip).count()
    response = _send(client_in, trip, "I think the Azores would be lovely")
    assert response.status_code == 302
    assert Message.objects.filter(conversation=trip).count() == before  # nothing posted yet
    assert _answer("island", trip) is None
    html = _page(client_in, trip)
    assert 'data-repair="proposal"' in html
    assert "I think the Azores would be lovely" in html  # what was typed is kept, shown
    row = Repair.objects.get(conversation=trip, open=True)
    # the filled card: Azores is checked
    assert 'value="2" checked' in html
    url = reverse("chat:repair_answer", args=[trip.pk, row.pk])
    assert client_in.post(url, {"action": "answer", "f-0": "2"}).status_code == 302
    answer = _answer("island", trip)
    assert answer.value == "azores" and answer.source == StructuredAnswer.Source.FREE_TEXT
    assert answer.raw_text == "I think the Azores would be lovely"
    row.refresh_from_db()
    assert row.outcome == RepairOutcome.CONFIRMED and not row.open


def test_a_proposal_changed_before_confirming_is_the_persons_click(client_in, trip):
    _send(client_in, trip, "I think the Azores would be lovely")
    row = Repair.objects.get(conversation=trip, open=True)
    url = reverse("chat:repair_answer", args=[trip.pk, row.pk])
    client_in.post(url, {"action": "answer", "f-0": "1"})
    answer = _answer("island", trip)
    assert answer.value == "madeira" and answer.source == StructuredAnswer.Source.OPTION_CLICK


def test_a_proposal_sent_as_a_message_instead_loses_nothing(client_in, trip):
    _send(client_in, trip, "I think the Azores would be lovely")
    row = Repair.objects.get(conversation=trip, open=True)
    url = reverse("chat:repair_answer", args=[trip.pk, row.pk])
    client_in.post(url, {"action": "send"})
    assert Message.objects.filter(
        conversation=trip, role=Role.USER, content="I think the Azores would be lovely"
    ).exists()


def test_a_digression_is_answered_and_the_question_shown_again_below(client_in, trip):
    asks_before = Message.objects.filter(
        conversation=trip, metadata__has_key="ask_user_options"
    ).count()
    _send(client_in, trip, "What is the weather like in spring?")
    # posted and answered as usual
    assert Message.objects.filter(
        conversation=trip, role=Role.USER, content="What is the weather like in spring?"
    ).exists()
    assert Message.objects.filter(
        conversation=trip, role=Role.ASSISTANT, content__contains="doesn't answer"
    ).exists()
    # the same question waits (its wait is open), never a second one
    assert (
        Message.objects.filter(conversation=trip, metadata__has_key="ask_user_options").count()
        == asks_before
    )
    assert Wait.objects.filter(conversation=trip, status=WaitStatus.OPEN).count() == 1
    html = _page(client_in, trip)
    assert 'data-repair="reask"' in html and "Still waiting for your answer: Which island?" in html
    # answered from the prompt below
    row = Repair.objects.get(conversation=trip, open=True)
    url = reverse("chat:repair_answer", args=[trip.pk, row.pk])
    client_in.post(url, {"action": "answer", "f-0": "0"})
    assert _answer("island", trip).value == "canaries"
    assert StructuredAnswer.objects.filter(conversation=trip, field="island").count() == 1


@override_settings(REPAIR_REPROMPTS=3)
def test_reasks_escalate_then_the_question_is_left_to_the_agent(client_in, trip):
    headings = []
    for n in range(3):
        _send(client_in, trip, f"Tell me a joke number {n}")
        html = _page(client_in, trip)
        headings.append(html)
    assert "Still waiting for your answer" in headings[0]
    assert "I still need your answer" in headings[1]
    assert "Last time I ask" in headings[2]
    _send(client_in, trip, "And another joke")
    outcomes = list(
        Repair.objects.filter(conversation=trip).order_by("id").values_list("outcome", "reprompts")
    )
    assert outcomes[-1] == (RepairOutcome.EXHAUSTED, 3)
    assert 'data-repair="' not in _page(client_in, trip)


@override_settings(REPAIR_REPROMPTS=2, REPAIR_REPROMPTS_PER_AGENT={"intake": 0})
def test_the_reask_bound_is_per_agent(client_in, trip):
    _send(client_in, trip, "Tell me a joke")
    assert Repair.objects.get(conversation=trip).outcome == RepairOutcome.EXHAUSTED


@pytest.mark.parametrize("words", ["never mind", "skip that", "算了", "跳过"])
def test_never_mind_skips_the_waiting_question(client_in, trip, words):
    _send(client_in, trip, words)
    answer = _answer("island", trip)
    assert answer is not None and answer.source == StructuredAnswer.Source.SKIPPED
    row = Repair.objects.get(conversation=trip)
    assert row.outcome == RepairOutcome.SKIPPED and row.typed_text == words


def test_chinese_replies_answer_the_chinese_trip(client_in, user):
    conversation = conversation_create(owner=user, agent="intake", language="zh-hans")
    intake_begin(conversation=conversation, definition_id="trip")
    _send(client_in, conversation, "加那利")
    assert _answer("island", conversation).value == "canaries"
    _send(client_in, conversation, "7")
    _send(client_in, conversation, "是")
    assert _answer("children", conversation).value is True


def test_typing_the_label_answers_an_inline_card_as_free_text(client_in, inline_card):
    conversation, card = inline_card
    _send(client_in, conversation, "canaries")
    submission = Submission.objects.get(conversation=conversation)
    (item,) = submission.payload["answers"]
    assert item["provenance"] == "free_text" and item["typed_text"] == "canaries"
    assert item["answer"] == "Canaries"
    # the answer message is the card's envelope, as a click would post it
    answer = Message.objects.filter(conversation=conversation, role=Role.USER).last()
    assert "questionnaire-response" in answer.content and '"typed_text"' in answer.content


def test_a_digression_keeps_an_inline_card_answerable_below(client_in, inline_card):
    conversation, card = inline_card
    _send(client_in, conversation, "Is it warm there in May?")
    # the echo agent answered; the card is no longer the latest message, yet still waits
    assert Message.objects.filter(conversation=conversation, role=Role.ASSISTANT).last() != card
    html = _page(client_in, conversation)
    assert "Still waiting for your answer" in html
    row = Repair.objects.get(conversation=conversation, open=True)
    url = reverse("chat:repair_answer", args=[conversation.pk, row.pk])
    assert client_in.post(url, {"action": "answer", "f-0": "1"}).status_code == 302
    submission = Submission.objects.get(conversation=conversation)
    assert submission.message_id == card.pk and submission.answers
    assert Submission.objects.filter(conversation=conversation).count() == 1


def test_a_stale_prompt_is_409_and_changes_nothing(client_in, trip):
    _send(client_in, trip, "I think the Azores would be lovely")
    row = Repair.objects.get(conversation=trip, open=True)
    _send(client_in, trip, "Madeira")  # answered by typing meanwhile
    url = reverse("chat:repair_answer", args=[trip.pk, row.pk])
    response = client_in.post(url, {"action": "answer", "f-0": "2"})
    assert response.status_code == 409 and response["X-Error-Code"] == "repair_not_open"
    assert _answer("island", trip).value == "madeira"


def test_an_empty_confirmation_is_400_and_keeps_the_prompt(client_in, trip):
    _send(client_in, trip, "I think the Azores would be lovely")
    row = Repair.objects.get(conversation=trip, open=True)
    url = reverse("chat:repair_answer", args=[trip.pk, row.pk])
    response = client_in.post(url, {"action": "answer", "f-0": "99"})
    assert response.status_code == 400 and response["X-Error-Code"] == "answer_required"
    assert Repair.objects.get(pk=row.pk).open and _answer("island", trip) is None


def test_another_persons_prompt_is_404(client, other_user, trip):
    _send_as = client
    _send_as.force_login(other_user)
    url = reverse("chat:repair_answer", args=[trip.pk, 1])
    assert _send_as.post(url, {"action": "skip"}).status_code == 404


@pytest.mark.parametrize("words", ["actually, make it Madeira", "Actually it's Madeira"])
def test_actually_make_it_x_changes_the_earlier_answer(client_in, trip, words):
    _send(client_in, trip, "Canaries")
    first = _answer("island", trip)
    _send(client_in, trip, words)
    rows = list(StructuredAnswer.objects.filter(conversation=trip, field="island").order_by("id"))
    assert [r.value for r in rows] == ["canaries", "madeira"]
    assert rows[1].amends_id == first.pk and rows[1].raw_text == words
    assert Repair.objects.filter(conversation=trip).last().outcome == RepairOutcome.AMENDED
    change = Message.objects.filter(conversation=trip, role=Role.USER).last()
    assert "amended" in change.content


def test_bu_dui_shi_x_changes_the_earlier_answer_in_chinese(client_in, user):
    conversation = conversation_create(owner=user, agent="intake", language="zh-hans")
    intake_begin(conversation=conversation, definition_id="trip")
    _send(client_in, conversation, "加那利")
    _send(client_in, conversation, "不对，是马德拉")
    assert list(
        StructuredAnswer.objects.filter(conversation=conversation, field="island")
        .order_by("id")
        .values_list("value", flat=True)
    ) == ["canaries", "madeira"]


def test_actually_changes_an_inline_card_answer_to_a_new_version(client_in, inline_card):
    conversation, card = inline_card
    _send(client_in, conversation, "Canaries")
    _send(client_in, conversation, "actually, make it Azores")
    versions = list(Submission.objects.filter(conversation=conversation).order_by("version"))
    assert [v.version for v in versions] == [1, 2]
    (item,) = versions[1].payload["answers"]
    assert item["answer"] == "Azores" and item["provenance"] == "amended"
    assert versions[1].payload["amends"] == versions[0].user_message_id


def test_actually_with_words_that_name_nothing_is_an_ordinary_message(client_in, trip):
    _send(client_in, trip, "Canaries")
    _send(client_in, trip, "actually, what time is it?")
    assert StructuredAnswer.objects.filter(conversation=trip, field="island").count() == 1
    assert Message.objects.filter(
        conversation=trip, role=Role.USER, content="actually, what time is it?"
    ).exists()


@pytest.mark.parametrize(
    ("fields", "status", "code"),
    [
        ({"action": "answer", "f-0": "nan"}, 400, "answer_required"),
        ({"action": "answer", "f-0": "inf"}, 400, "answer_required"),
        ({"action": "answer", "f-0": "99"}, 400, "answer_value_invalid"),  # the kind says
        ({"action": "explode"}, 400, "repair_action_invalid"),
        ({"action": "send"}, 400, "repair_action_invalid"),  # a re-ask has nothing to send
    ],
)
def test_hostile_prompt_posts_are_4xx_and_change_nothing(client_in, trip, fields, status, code):
    _send(client_in, trip, "Canaries")
    _send(client_in, trip, "Tell me about volcanoes")  # "How many nights?" is asked again
    row = Repair.objects.get(conversation=trip, open=True)
    before = Message.objects.filter(conversation=trip).count()
    url = reverse("chat:repair_answer", args=[trip.pk, row.pk])
    response = client_in.post(url, fields)
    assert (response.status_code, response["X-Error-Code"]) == (status, code)
    assert Message.objects.filter(conversation=trip).count() == before
    assert _answer("nights", trip) is None and Repair.objects.get(pk=row.pk).open


def test_a_zh_page_shows_the_prompt_in_chinese(client_in, user):
    conversation = conversation_create(owner=user, agent="intake", language="zh-hans")
    intake_begin(conversation=conversation, definition_id="trip")
    url = reverse("chat:message_send", args=[conversation.pk])
    client_in.post(url, {"content": "我想去马德拉吧"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = client_in.get(
        reverse("chat:conversation", args=[conversation.pk]), HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()
    assert "这是你对“去哪个岛？”的回答吗？" in html and "你写的是：“我想去马德拉吧”" in html
    assert "确认" in html and "改为作为消息发送" in html


def test_a_deferred_form_is_filled_from_typed_words_and_confirmed(client_in, user):
    """Forms take typed answers through their pending/resolve hooks too; being a kind in
    REPAIR_CONFIRM_KINDS, always with a confirming click."""
    from questionnaires.forms.models import FormStatus, InteractiveForm

    conversation = conversation_create(owner=user, agent="scripted", language="en")
    conversation.state = {"script": "forms"}
    conversation.save()
    _send(client_in, conversation, "Plan a trip for me")
    form = InteractiveForm.objects.get(conversation=conversation)
    assert form.status == FormStatus.PENDING
    _send(client_in, conversation, "Mountains")
    row = Repair.objects.get(conversation=conversation, open=True)
    assert row.outcome == RepairOutcome.PROPOSED and row.kind == "form"
    html = _page(client_in, conversation)
    assert 'data-repair="proposal"' in html
    # the prompt's form as it was filled: each field's option index, as the page posts it
    schema = kind_named("form").pending(conversation, row.wait_ref).response_schema
    fields = {
        f"f-{index}": str(n)
        for index, field in enumerate(fields_of(schema))
        for n, option in enumerate(field.options)
        if option.value == row.payload.get("answers", {}).get(field.path[-1])
    }
    assert fields
    url = reverse("chat:repair_answer", args=[conversation.pk, row.pk])
    assert client_in.post(url, {"action": "answer", **fields}).status_code == 302
    form.refresh_from_db()
    assert form.status == FormStatus.ANSWERED

"""Issue 32: each answer keeps the question as shown (DESIGN §4.14) — its words, options,
widget and language at the time of answering — for every kind of card: asks and inline
cards store it with the answer (`shown`); deferred forms and MCP elicitations keep what
they showed on their own row (`render_payload`, `prompt` + `requested_schema`)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation

from chat.core.models import Role
from chat.core.services import conversation_create, message_create
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.services import ask_answer_change, ask_create, slot_edit
from questionnaires.elicitations.models import Elicitation
from questionnaires.elicitations.services import elicitation_answer
from questionnaires.forms.answers import interactive_form_answer
from questionnaires.forms.models import InteractiveForm
from questionnaires.inline.models import Submission
from questionnaires.inline.services import questionnaire_answer
from tests.support.asking import SPEC_PAYLOAD, TRIP, open_elicitation, open_form

pytestmark = pytest.mark.django_db

ZH_CARD = """请回答几个问题。

```questionnaire
title: 行程计划
questions:
  - type: single_choice
    text: 去哪里？
    options:
      - 巴黎
      - 罗马
    default: 巴黎
    allow_other: true
  - type: free_text
    text: 还有什么？
    default: ""
```
"""


@pytest.fixture
def zh_client(client_in):
    client_in.cookies["django_language"] = "zh-hans"
    return client_in


def test_an_ask_answered_in_chinese_keeps_the_question_as_shown(zh_client, user):
    conversation = conversation_create(owner=user, title="膝盖", agent="external")
    ask = ask_create(conversation=conversation, payload=SPEC_PAYLOAD)
    assert ask is not None
    response = zh_client.post(
        reverse("chat:ask_answer", args=[conversation.pk, ask.pk]),
        {"action": "option", "value": "mild"},
    )
    assert response.status_code in (200, 302), response.status_code
    answer = StructuredAnswer.objects.get()
    assert answer.shown == {
        "question": "你的膝盖下坠感是否伴随疼痛？",
        "options": [
            {"value": "none", "label": "没有疼痛"},
            {"value": "mild", "label": "轻微疼痛"},
            {"value": "moderate", "label": "中等疼痛"},
            {"value": "severe", "label": "明显疼痛"},
        ],
        "widget": "buttons",
        "language": "zh-hans",
    }
    # A change keeps its own copy: the question it changed, as shown then.
    change = ask_answer_change(
        conversation=conversation,
        ask_message=ask,
        version=answer.pk,
        source="user_option_click",
        value="severe",
    )
    assert change.shown["question"] == "你的膝盖下坠感是否伴随疼痛？"
    assert change.shown["widget"] == "buttons"


def test_a_side_panel_edit_keeps_the_panel_s_question(user):
    conversation = conversation_create(owner=user, title="Knee", agent="external")
    scale = {"question": "Rate it", "field": "pain_score", "type": "scale", "min": 0, "max": 10}
    assert ask_create(conversation=conversation, payload=scale) is not None
    with translation.override("en"):
        row = slot_edit(conversation=conversation, field="pain_score", value="7")
    assert row.shown["widget"] == "panel"
    assert row.shown["question"] == "Rate it"  # (no definition: the ask's own words)
    assert (row.shown["min"], row.shown["max"], row.shown["language"]) == (0, 10, "en")


@pytest.mark.parametrize("lang", ["zh-hans", "en"])
def test_an_inline_card_keeps_the_card_as_shown(user, lang):
    conversation = conversation_create(owner=user, title="Trip", agent="external")
    card = message_create(conversation=conversation, role=Role.ASSISTANT, content=ZH_CARD)
    questionnaire_answer(
        conversation=conversation,
        message_id=card.pk,
        questionnaire_id=f"{card.pk}_q1",
        answers={"q1": "罗马", "q2": "靠窗"},
        other_text={},
        user=user,
        lang=lang,
    )
    shown = Submission.objects.get().shown
    assert shown["title"] == "行程计划" and shown["language"] == lang
    first, second = shown["questions"]
    assert first == {
        "id": "q1",
        "type": "single_choice",
        "text": "去哪里？",
        "options": [{"value": "巴黎", "label": "巴黎"}, {"value": "罗马", "label": "罗马"}],
        "allow_other": True,
        "other_label": "其他" if lang == "zh-hans" else "Other",
        "widget": "radio",
    }
    assert (second["text"], second["widget"], second["options"]) == ("还有什么？", "textarea", [])


def test_an_inline_card_submitted_from_the_page_keeps_the_page_s_language(zh_client, user):
    conversation = conversation_create(owner=user, title="Trip", agent="external")
    card = message_create(conversation=conversation, role=Role.ASSISTANT, content=TRIP)
    response = zh_client.post(
        reverse("chat:questionnaire_submit", args=[conversation.pk, card.pk]),
        {"questionnaire_id": f"{card.pk}_q1", "answer-1": "Rome", "answer-2": ["Train"]},
    )
    assert response.status_code in (200, 302), response.content[:300]
    shown = Submission.objects.get().shown
    assert shown["language"] == "zh-hans"
    assert [q["text"] for q in shown["questions"]] == ["Where to?", "Transport?", "Anything else?"]


def test_a_deferred_form_keeps_what_it_showed_after_the_answer(conversation):
    _, result = open_form(conversation)
    form = InteractiveForm.objects.get()
    shown = dict(form.render_payload)
    interactive_form_answer(
        conversation=conversation,
        payload={
            "type": "interactive_form_question",
            "tool_use_id": form.tool_use_id,
            "status": "answered",
            "answers": {"color": "red"},
        },
    )
    form.refresh_from_db()
    assert form.status == "answered" and form.render_payload == shown
    texts = [q["question"] for q in form.render_payload["questions"]]
    assert texts == ["Colour?", "Extras?", "Name?"]
    assert form.render_payload["questions"][0]["options"][0]["label"] == "red"


def test_an_elicitation_keeps_what_it_showed_after_the_answer(conversation, user):
    row = open_elicitation(conversation)
    before = (row.prompt, row.requested_schema)
    elicitation_answer(elicitation=row, action="decline", data={}, user=user)
    row = Elicitation.objects.get(pk=row.pk)
    assert row.status == "declined" and (row.prompt, row.requested_schema) == before

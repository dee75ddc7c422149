"""Issue 32 (2) on deferred forms: "kept the default" only for a question the person never
touched; a client can't claim a default for another value, nor touch unknown questions."""

from __future__ import annotations

import json

import pytest

from chat.core.errors import ChatError
from chat.core.models import Message, Role
from chat.usecases import message_post_user
from questionnaires.models import InteractiveForm
from tests.support.asking import open_form

pytestmark = pytest.mark.django_db

WITH_DEFAULTS = [
    {
        "id": "mode",
        "question": "Mode?",
        "input_type": "radio",
        "options": ["Careful", "Fast"],
        "default": "Careful",
    },
    {"id": "note", "question": "Note?", "input_type": "text", "default": "none"},
]


def answer(conversation, answers, touched=None) -> Message:
    payload = {
        "type": "interactive_form_question",
        "tool_use_id": "call_1",
        "status": "answered",
        "answers": answers,
    }
    if touched is not None:
        payload["touched"] = touched
    return message_post_user(conversation=conversation, content="", form_answer=payload)


def provenances() -> list[str]:
    result = json.loads(Message.objects.get(role=Role.TOOL).content)
    return [a["provenance"] for a in result["answers"]]


def test_untouched_defaults_are_kept(conversation):
    open_form(conversation, questions=WITH_DEFAULTS)
    message = answer(conversation, {"mode": "Careful", "note": "none"})
    assert provenances() == ["default", "default"]
    assert "- Mode?: Careful (kept the default)" in message.content


def test_a_click_on_the_preselected_option_is_chosen(conversation):
    open_form(conversation, questions=WITH_DEFAULTS)
    message = answer(conversation, {"mode": "Careful", "note": "none"}, touched=["mode"])
    assert provenances() == ["chosen", "default"]
    assert "- Mode?: Careful\n" in message.content + "\n"


def test_a_value_other_than_the_default_is_never_default(conversation):
    open_form(conversation, questions=WITH_DEFAULTS)
    answer(conversation, {"mode": "Fast", "note": "typed"}, touched=[])
    assert provenances() == ["chosen", "free_text"]


@pytest.mark.parametrize("touched", ["mode", ["nope"], [1]])
def test_bad_touched_is_refused_and_nothing_is_stored(conversation, touched):
    open_form(conversation, questions=WITH_DEFAULTS)
    with pytest.raises(ChatError) as refused:
        answer(conversation, {"mode": "Careful", "note": ""}, touched=touched)
    assert refused.value.code == "invalid_interactive_form_answer"
    assert refused.value.status == 400
    assert InteractiveForm.objects.get().status == "pending"

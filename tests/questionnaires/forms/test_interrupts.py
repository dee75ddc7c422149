"""A deferred form as an AG-UI interrupt (questionnaires.forms.interrupts): its schema
describes exactly the answers the form takes, and an answer a client sends is recorded
as the page's Send records it — the same tool result, the same readable message."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chat.core.errors import ChatError
from chat.core.models import Role, Wait, WaitStatus
from questionnaires.forms.answers import interactive_form_answer
from questionnaires.forms.interrupts import form_pending_for_client, form_resolve_for_client
from questionnaires.models import InteractiveForm
from tests.support.asking import open_form

pytestmark = pytest.mark.django_db


def _ref() -> str:
    return f"form:{InteractiveForm.objects.get().pk}"


def _resolve(conversation, user, payload):
    form_resolve_for_client(
        conversation=conversation, ref=_ref(), payload=payload, user=user, lang="en"
    )


def test_the_interrupt_describes_every_question_and_the_answer_it_takes(conversation):
    open_form(conversation)
    pending = form_pending_for_client(conversation, _ref())
    assert pending is not None and pending.tool_call_id == "call_1"
    assert pending.message == "Colour?\nExtras?\nName?"
    schema = pending.response_schema
    assert schema["required"] == ["answers"] and schema["additionalProperties"] is False
    answers = schema["properties"]["answers"]
    assert answers["required"] == ["color"]
    color, extras, name = (answers["properties"][q] for q in ("color", "extras", "name"))
    assert color["type"] == "string" and [o["const"] for o in color["oneOf"]] == ["red", "blue"]
    assert extras["type"] == "array" and [o["const"] for o in extras["items"]["oneOf"]] == [
        "a",
        "b",
    ]
    assert name == {"title": "Name?", "type": "string", "maxLength": 10_000}
    # another conversation's form, a malformed ref, a form no longer pending: nothing
    assert form_pending_for_client(conversation, "form:x") is None
    assert form_pending_for_client(conversation, "ask:1") is None


def test_a_client_answer_is_recorded_as_the_pages_send(conversation, user):
    open_form(conversation)
    _resolve(conversation, user, {"answers": {"color": "blue", "extras": ["b"]}, "message": "hi"})
    form = InteractiveForm.objects.get()
    assert form.status == "answered"
    assert form.answer == {
        "answers": {"color": "blue", "extras": ["b"], "name": ""},
        "message": "hi",
    }
    result = json.loads(conversation.messages.get(role=Role.TOOL, tool_call_id="call_1").content)
    assert result["status"] == "answered"
    assert [a["value" if "value" in a else "values"] for a in result["answers"]] == [
        "blue",
        ["b"],
        "",
    ]
    shown = conversation.messages.filter(role=Role.USER).last()
    assert shown.content.startswith("Form answered:\n- Colour?: blue\n- Extras?: b")
    assert Wait.objects.get(ref=_ref()).status == WaitStatus.ANSWERED
    assert form_pending_for_client(conversation, _ref()) is None


def test_cancelled_cancels_the_form(conversation, user):
    open_form(conversation)
    _resolve(conversation, user, None)
    assert InteractiveForm.objects.get().status == "cancelled"
    result = json.loads(conversation.messages.get(role=Role.TOOL, tool_call_id="call_1").content)
    assert result["status"] == "cancelled" and "answers" not in result


@pytest.mark.parametrize(
    ("payload", "code", "field"),
    [
        ({"answers": {"color": "green"}}, "interactive_form_answer_invalid", "color"),
        ({"answers": {"extras": ["a"]}}, "interactive_form_answer_invalid", "color"),
        ({"answers": {"color": "red", "size": "xl"}}, "interactive_form_answer_invalid", "size"),
        ({"answers": {"color": 3}}, "interactive_form_answer_invalid", "color"),
        ({"answers": {"color": "red"}, "touched": ["nope"]}, "invalid_interactive_form_answer", ""),
        ({"answers": {"color": "red"}, "message": 5}, "invalid_interactive_form_answer", ""),
        ({"answers": {"color": "red"}, "status": "answered"}, "interrupt_payload_invalid", ""),
        ({"color": "red"}, "interrupt_payload_invalid", ""),
        ("red", "interrupt_payload_invalid", ""),
    ],
)
def test_a_bad_answer_is_a_400_with_a_stable_code_and_nothing_changes(
    conversation, user, payload, code, field
):
    open_form(conversation)
    messages = conversation.messages.count()
    with pytest.raises(ChatError) as refused:
        _resolve(conversation, user, payload)
    assert refused.value.status == 400 and refused.value.code == code
    if field:
        assert field in refused.value.field_messages()
    assert InteractiveForm.objects.get().status == "pending"
    assert conversation.messages.count() == messages


def test_a_form_answered_meanwhile_is_a_409(conversation, user):
    open_form(conversation)
    ref = _ref()
    interactive_form_answer(
        conversation=conversation,
        payload={
            "type": "interactive_form_question",
            "tool_use_id": "call_1",
            "status": "cancelled",
        },
    )
    with pytest.raises(ChatError) as refused:
        form_resolve_for_client(
            conversation=conversation, ref=ref, payload={"answers": {}}, user=user, lang="en"
        )
    assert (refused.value.status, refused.value.code) == (409, "interactive_form_not_pending")


CALLS = itertools.count()
QUESTIONS = [
    {"id": "one", "question": "One?", "input_type": "radio", "options": ["x", "y", "z"]},
    {"id": "many", "question": "Many?", "input_type": "checkbox", "options": ["p", "q", "r"]},
    {"id": "words", "question": "Words?", "input_type": "textarea"},
]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    one=st.sampled_from(["", "x", "y", "z"]),
    many=st.lists(st.sampled_from(["p", "q", "r"]), unique=True),
    words=st.text(max_size=40),
)
def test_any_answer_the_schema_allows_is_recorded_exactly(conversation, user, one, many, words):
    """Whatever a client sends within the schema is what the form, the tool result and
    the readable message say (multiple choices in the options' order, as in the page)."""
    open_form(conversation, questions=QUESTIONS, tool_use_id=f"call_{next(CALLS)}")
    form = InteractiveForm.objects.get(status="pending")
    form_resolve_for_client(
        conversation=conversation,
        ref=f"form:{form.pk}",
        payload={"answers": {"one": one, "many": many, "words": words}},
        user=user,
        lang="en",
    )
    form.refresh_from_db()
    in_order = [v for v in ("p", "q", "r") if v in many]
    assert form.answer["answers"] == {"one": one, "many": in_order, "words": words}
    result = json.loads(
        conversation.messages.get(role=Role.TOOL, tool_call_id=form.tool_use_id).content
    )
    assert result["answers"][0]["value"] == one
    assert result["answers"][1]["values"] == in_order
    assert result["answers"][2]["value"] == words

"""Opening, refusing and answering deferred interactive forms (spec 003)."""

from __future__ import annotations

import json

import pytest

from chat.agent.tools import interactive_form_question
from chat.agent.tools.base import StoredCall
from chat.core.errors import ChatError
from chat.core.models import Message, Role, Run, Wait
from chat.core.services import message_create
from chat.usecases import message_post_user
from questionnaires.forms.services import form_check
from questionnaires.models import InteractiveForm
from tests.support.asking import QUESTIONS, open_form

pytestmark = pytest.mark.django_db

ANSWER = {
    "type": "interactive_form_question",
    "tool_use_id": "call_1",
    "status": "answered",
    "answers": {"color": "blue", "extras": ["b"], "name": "Ann"},
}


def test_open_returns_the_deferred_result_and_writes_the_render_payload(conversation):
    message, result = open_form(conversation)
    form = InteractiveForm.objects.get()
    assert result == {
        "__deferred_user_input__": True,
        "success": True,
        "status": "waiting_for_user_response",
        "ask_id": form.ask_id,
    }
    payload = Message.objects.get(pk=message.pk).metadata["render_payloads"]["call_1"]
    assert payload["type"] == "interactive_form_question"
    assert payload["ask_id"] == form.ask_id
    assert payload["task_id"] == conversation.pk
    assert payload["subtask_id"] == form.run_id
    assert [q["input_type"] for q in payload["questions"]] == ["choice", "choice", "text"]
    assert payload["questions"][1]["multi_select"] is True
    assert form.status == "pending" and form.message_id == message.pk


def test_invalid_arguments_list_every_problem_and_create_nothing(conversation):
    run = Run.objects.create(conversation=conversation)
    result = form_check(
        conversation_id=conversation.pk,
        run_id=run.pk,
        arguments={"questions": [{"question": ""}, {"question": "x", "input_type": "choice"}]},
    )
    assert result["success"] is False and result["error_code"] == "INVALID_ARGUMENT"
    assert [e["path"] for e in result["errors"]] == [
        "questions[1].question",
        "questions[2].options",
    ]
    assert "__deferred_user_input__" not in result
    assert not InteractiveForm.objects.exists()


def test_second_form_in_the_same_run_is_refused(conversation, pending):
    run = pending.run
    InteractiveForm.objects.update(status="answered")  # even once the first is answered
    _message, result = open_form(conversation, tool_use_id="call_2", run=run)
    assert result["success"] is False
    assert result["error_code"] == "interactive_form_already_shown"
    assert "one interactive form per run" in result["message"]
    assert InteractiveForm.objects.count() == 1


def test_a_form_while_another_is_pending_is_refused(conversation, pending):
    _message, result = open_form(conversation, tool_use_id="call_2")
    assert result["error_code"] == "pending_interactive_form"


def test_checking_writes_nothing_and_the_stored_call_creates_the_form(conversation):
    """The one mechanism (issue 24): the tool only checks; the form appears with the
    message that carries its call (`persisted`), once."""
    run = Run.objects.create(conversation=conversation)
    arguments = {"questions": QUESTIONS}
    result = form_check(conversation_id=conversation.pk, run_id=run.pk, arguments=arguments)
    assert result["success"] is True and not InteractiveForm.objects.exists()
    refused = form_check(
        conversation_id=conversation.pk, run_id=run.pk, arguments=arguments, shown_in_step=True
    )
    assert refused["error_code"] == "interactive_form_already_shown"
    call = {
        "id": "late",
        "type": "function",
        "function": {"name": "interactive_form_question", "arguments": json.dumps(arguments)},
    }
    message = message_create(
        conversation=conversation, role=Role.ASSISTANT, content="", tool_calls=[call], run=run
    )
    stored = StoredCall("late", arguments, result, run, message)
    interactive_form_question.persisted(stored)
    interactive_form_question.persisted(stored)  # a second time changes nothing
    form = InteractiveForm.objects.get()
    assert (form.ask_id, form.message_id) == (result["ask_id"], message.pk)
    payload = Message.objects.get(pk=message.pk).metadata["render_payloads"]["late"]
    assert payload["ask_id"] == result["ask_id"] and payload["questions"]
    assert Wait.objects.get().ref == f"form:{form.pk}"


def test_plain_text_is_refused_while_a_form_is_pending(conversation, pending):
    count = Message.objects.count()
    with pytest.raises(ChatError) as info:
        message_post_user(conversation=conversation, content="hello")
    assert info.value.code == "pending_interactive_form" and info.value.status == 409
    assert info.value.details["tool_use_id"] == "call_1"
    assert Message.objects.count() == count


def test_an_answer_without_a_pending_form_is_refused(conversation):
    with pytest.raises(ChatError) as info:
        message_post_user(conversation=conversation, content="", form_answer=ANSWER)
    assert info.value.code == "interactive_form_not_pending" and info.value.status == 409


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"type": "questionnaire"}, "invalid_interactive_form_answer"),
        ({"tool_use_id": ""}, "interactive_form_tool_required"),
        ({"tool_use_id": None}, "interactive_form_tool_required"),
        ({"tool_use_id": "call_9"}, "interactive_form_tool_mismatch"),
        ({"status": "maybe"}, "invalid_interactive_form_answer"),
        ({"message": 5}, "invalid_interactive_form_answer"),
        ({"answers": {"color": "green"}}, "interactive_form_answer_invalid"),
    ],
)
def test_bad_answers_are_refused(conversation, pending, change, code):
    with pytest.raises(ChatError) as info:
        message_post_user(conversation=conversation, content="", form_answer={**ANSWER, **change})
    assert info.value.code == code
    assert InteractiveForm.objects.get().status == "pending"


def test_answer_errors_name_each_field(conversation, pending):
    with pytest.raises(ChatError) as info:
        message_post_user(
            conversation=conversation,
            content="",
            form_answer={**ANSWER, "answers": {"color": "", "extras": ["z"]}},
        )
    fields = info.value.details["fields"]
    assert set(fields) == {"color", "extras"}
    assert "needs an answer" in fields["color"]


def test_accepted_answer_becomes_the_tool_result_and_a_readable_message(conversation, pending):
    message = message_post_user(conversation=conversation, content="", form_answer=ANSWER)
    form = InteractiveForm.objects.get()
    assert form.status == "answered" and form.answer_message_id == message.pk
    tool = Message.objects.get(role=Role.TOOL, tool_call_id="call_1")
    result = json.loads(tool.content)
    assert result["status"] == "answered" and result["tool_use_id"] == "call_1"
    assert result["answers"][0] == {
        "id": "color",
        "question": "Colour?",
        "value": "blue",
        "label": "blue",
        "provenance": "chosen",  # issue 27, additive
    }
    assert result["answers"][1]["values"] == ["b"]
    assert "waiting_for_user_response" not in tool.content
    assert message.role == Role.USER
    assert message.content.splitlines()[:2] == ["Form answered:", "- Colour?: blue"]
    assert tool.seq < message.seq
    # the answer starts the next run (the echo agent answers inline)
    assert Run.objects.filter(trigger_message=message).exists()


def test_a_stored_deferred_tool_result_is_replaced_not_duplicated(conversation, pending):
    waiting = json.dumps({"__deferred_user_input__": True, "status": "waiting_for_user_response"})
    message_create(
        conversation=conversation, role=Role.TOOL, tool_call_id="call_1", content=waiting
    )
    message_post_user(conversation=conversation, content="", form_answer=ANSWER)
    tools = Message.objects.filter(role=Role.TOOL, tool_call_id="call_1")
    assert tools.count() == 1
    assert json.loads(tools.get().content)["status"] == "answered"


def test_cancel_with_a_message(conversation, pending):
    answer = {
        **ANSWER,
        "status": "cancelled",
        "answers": {"color": "nonsense"},
        "message": "Never mind",
    }
    message = message_post_user(conversation=conversation, content="", form_answer=answer)
    assert InteractiveForm.objects.get().status == "cancelled"
    result = json.loads(Message.objects.get(role=Role.TOOL).content)
    assert result == {
        "type": "interactive_form_question",
        "ask_id": InteractiveForm.objects.get().ask_id,
        "tool_use_id": "call_1",
        "status": "cancelled",
        "message": "Never mind",
    }
    assert message.content == "Form cancelled.\n\nNever mind"
    # the form is no longer pending: plain text works again
    message_post_user(conversation=conversation, content="hello again")


def test_a_second_submit_is_refused(conversation, pending):
    message_post_user(conversation=conversation, content="", form_answer=ANSWER)
    with pytest.raises(ChatError) as info:
        message_post_user(conversation=conversation, content="", form_answer=ANSWER)
    assert info.value.code == "interactive_form_not_pending"


def test_two_tabs_submitting_at_once_create_one_answer(conversation, pending, monkeypatch):
    """Both requests pass the checks before either writes; only one answer is stored.

    (The same race over real HTTP with parallel requests is in tests/e2e/test_forms.py.)
    """
    from questionnaires.forms import answers as interactive_forms
    from questionnaires.forms.services import form_check_answer

    stale = form_check_answer(conversation_id=conversation.pk, payload=ANSWER)
    message_post_user(conversation=conversation, content="", form_answer=ANSWER)
    monkeypatch.setattr(interactive_forms, "form_check_answer", lambda **kw: stale)
    with pytest.raises(ChatError) as info:
        message_post_user(conversation=conversation, content="", form_answer=ANSWER)
    assert info.value.code == "interactive_form_not_pending"
    assert Message.objects.filter(role=Role.TOOL, tool_call_id="call_1").count() == 1
    assert Message.objects.filter(metadata__has_key="interactive_form_answer").count() == 1
    assert (
        Run.objects.filter(trigger_message__metadata__has_key="interactive_form_answer").count()
        == 1
    )

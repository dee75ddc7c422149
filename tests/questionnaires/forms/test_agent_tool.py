"""The interactive_form_question tool inside the agent loop (scripted agent, "forms")."""

from __future__ import annotations

import json

import pytest

from chat.agent.context import context_messages
from chat.core.models import Message, Role, Run
from chat.core.services import conversation_create
from chat.usecases import message_post_user
from questionnaires.models import InteractiveForm

pytestmark = pytest.mark.django_db


@pytest.fixture
def forms_conversation(user):
    conversation = conversation_create(owner=user, title="Trip", agent="scripted")
    conversation.state = {"script": "forms"}
    conversation.save(update_fields=["state"])
    return conversation


def test_the_form_defers_the_run_and_the_answer_resumes_it(forms_conversation):
    conversation = forms_conversation
    message_post_user(conversation=conversation, content="Plan a trip")
    run = Run.objects.get()
    assert run.stop_reason == "deferred" and run.status == "finished"
    form = InteractiveForm.objects.get()
    assert form.status == "pending" and form.run_id == run.pk
    assistant = Message.objects.get(role=Role.ASSISTANT)
    first, second = assistant.tool_calls
    assert form.tool_use_id == first["id"] and form.message_id == assistant.pk
    payload = assistant.metadata["render_payloads"][first["id"]]
    assert payload["subtask_id"] == run.pk and payload["task_id"] == conversation.pk
    assert second["id"] not in assistant.metadata["render_payloads"]
    results = {
        m.tool_call_id: json.loads(m.content) for m in Message.objects.filter(role=Role.TOOL)
    }
    assert results[first["id"]]["__deferred_user_input__"] is True
    assert "questions" not in results[first["id"]]  # the UI schema is not sent to the model
    assert results[second["id"]]["error_code"] == "interactive_form_already_shown"
    # nothing was written as user content
    assert Message.objects.filter(role=Role.USER).count() == 1

    message_post_user(
        conversation=conversation,
        content="",
        form_answer={
            "type": "interactive_form_question",
            "tool_use_id": first["id"],
            "status": "answered",
            "answers": {"destination": "City", "extras": ["food", "hiking"], "notes": "In May"},
        },
    )
    runs = list(Run.objects.order_by("id"))
    assert len(runs) == 2 and runs[1].stop_reason == "completed"
    context = context_messages(conversation=conversation)
    tool = next(m for m in context if m.get("tool_call_id") == first["id"])
    answer = json.loads(tool["content"])
    assert answer["status"] == "answered"
    assert answer["answers"][1]["labels"] == ["Hiking", "Good food"]
    assert all("waiting_for_user_response" not in (m.get("content") or "") for m in context)
    last = Message.objects.filter(role=Role.ASSISTANT).last()
    assert last.content.startswith("Thank you")


def test_the_tool_is_listed():
    from chat.agent.tools import TOOLS

    assert "interactive_form_question" in {t.name for t in TOOLS}

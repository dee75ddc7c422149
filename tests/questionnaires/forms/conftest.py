from __future__ import annotations

import json
from typing import Any

import pytest

QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "color",
        "question": "Colour?",
        "input_type": "radio",
        "options": ["red", "blue"],
        "required": True,
    },
    {"id": "extras", "question": "Extras?", "input_type": "checkbox", "options": ["a", "b"]},
    {"id": "name", "question": "Name?", "input_type": "text", "placeholder": "Ann"},
]


def open_form(
    conversation, *, tool_use_id: str = "call_1", questions=None, run=None
) -> tuple[Any, dict[str, Any]]:
    """An assistant message calling the tool in a fresh run, and the tool's result."""
    from chat.core.models import Role, Run
    from chat.core.services import message_create
    from questionnaires.forms.services import form_open

    run = run or Run.objects.create(conversation=conversation, status="running")
    arguments = {"questions": questions or QUESTIONS}
    message = message_create(
        conversation=conversation,
        role=Role.ASSISTANT,
        tool_calls=[
            {
                "id": tool_use_id,
                "type": "function",
                "function": {
                    "name": "interactive_form_question",
                    "arguments": json.dumps(arguments),
                },
            }
        ],
        run=run,
    )
    result = form_open(
        conversation_id=conversation.pk,
        run_id=run.pk,
        message_id=message.pk,
        tool_use_id=tool_use_id,
        arguments=arguments,
    )
    return message, result


@pytest.fixture
def pending(conversation):
    message, result = open_form(conversation)
    assert result["success"] is True, result
    return message

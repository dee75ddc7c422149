"""A card of every kind, ready to answer: sample data and makers the tests of several
packages share (inline questionnaires, asks, deferred forms, MCP elicitations)."""

from __future__ import annotations

import json
from typing import Any

# --- inline questionnaires (spec 000) ----------------------------------------------------

TRIP = """Please answer a few questions.

```questionnaire
title: Trip plan
questions:
  - type: single_choice
    text: Where to?
    options:
      - Paris
      - Rome
    default: Paris
    allow_other: true
  - type: multi_choice
    text: Transport?
    options:
      - Train
      - Plane
      - Car
    default:
      - Train
  - type: free_text
    text: Anything else?
    default: ""
```

Thanks!
"""

ASYNC_ARGS = {
    "title": "Async trip",
    "questions": [
        {"id": "dest", "type": "single_choice", "text": "Where?", "options": ["Oslo", "Bergen"]},
    ],
}


def post_async_card(conversation, *, call_id: str = "call_trip", arguments=None):
    """A questionnaire_async tool call plus its tool result, as an agent runtime posts them."""
    from chat.core.services import message_create
    from questionnaires.protocol import questionnaire_async

    args = ASYNC_ARGS if arguments is None else arguments
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "questionnaire_async", "arguments": json.dumps(args)},
    }
    card = message_create(conversation=conversation, role="assistant", tool_calls=[call])
    result = questionnaire_async(args, lang="en")
    message_create(
        conversation=conversation, role="tool", tool_call_id=call_id, content=json.dumps(result)
    )
    return card


# --- asks (spec 004) ---------------------------------------------------------------------

SPEC_PAYLOAD = {
    "question": "你的膝盖下坠感是否伴随疼痛？",
    "field": "pain_level",
    "options": [
        {"label": "没有疼痛", "value": "none", "icon": "✅"},
        {"label": "轻微疼痛", "value": "mild", "icon": "😐"},
        {"label": "中等疼痛", "value": "moderate", "icon": "😣"},
        {"label": "明显疼痛", "value": "severe", "icon": "😰"},
    ],
    "allow_free_text": True,
    "free_text_placeholder": "请描述你的疼痛程度...",
}


def options(n: int) -> list[dict[str, str]]:
    return [{"label": f"L{i}", "value": f"v{i}"} for i in range(n)]


REFERENCE = {  # a knowledge reference (spec 004 "知识库引用"), valid and normalized
    "title": "Why swelling matters",
    "snippet": "Swelling means fluid in the joint.",
    "source": "Clinic intake guide",
    "url": "https://example.org/knee#swelling",
}


# --- deferred forms (spec 003) -----------------------------------------------------------

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


# --- MCP elicitations --------------------------------------------------------------------

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "As on the badge"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "ok": {"type": "boolean", "default": True},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "day": {"type": "string", "format": "date"},
        "email": {"type": "string", "format": "email"},
    },
    "required": ["name", "age"],
}


def open_elicitation(conversation, **overrides):
    from questionnaires.elicitations.services import elicitation_open

    arguments: dict[str, Any] = {
        "conversation_id": conversation.pk,
        "run_id": None,
        "server_name": "demo",
        "tool_name": "book_room",
        "tool_call_id": "call_9",
        "mode": "form",
        "message": "Who is coming?",
        "requested_schema": SCHEMA,
        # opened by a session host's call (someone waits for the answer)
        "session_ref": "host:test",
    }
    arguments.update(overrides)
    return elicitation_open(**arguments)

from __future__ import annotations

from typing import Any

import pytest

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


@pytest.fixture
def pending(conversation):
    return open_elicitation(conversation)


@pytest.fixture
def pending_url(conversation):
    return open_elicitation(
        conversation,
        mode="url",
        requested_schema=None,
        url="https://bücher.example/pay?x=<b>",
        remote_id="rid-1",
        message="Pay here",
    )

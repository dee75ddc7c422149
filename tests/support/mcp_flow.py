"""Following a real MCP exchange from a test: wait for a card, for the run to finish, read
the tool result the model got, answer a card through its view (tests/mcphost)."""

from __future__ import annotations

import json
from typing import Any

from django.urls import reverse

from chat.core.models import Event, Role, Run, RunStatus
from questionnaires.models import Elicitation
from tests.support import wait_for


def pending(conversation: Any) -> Elicitation:
    return wait_for(
        lambda: Elicitation.objects.filter(conversation=conversation, status="pending").first(),
        "a pending elicitation card",
    )


def finished(conversation: Any) -> Run:
    run = wait_for(
        lambda: conversation.runs.filter(status__in=[RunStatus.FINISHED, RunStatus.FAILED]).first(),
        "the run to finish",
    )
    assert run.stop_reason == "completed", (run.stop_reason, run.error)
    return run


def suspended(conversation: Any) -> Run:
    return wait_for(
        lambda: conversation.runs.filter(status=RunStatus.SUSPENDED).first(), "the suspension"
    )


def tool_result(conversation: Any) -> dict[str, Any]:
    (event,) = [
        e.data
        for e in Event.objects.filter(conversation=conversation, name="tool_result")
        if e.data["name"].startswith("srv__") and e.data["name"] != "srv__*"  # (not a note)
    ]
    # The model reads the stored tool message: it says the same.
    stored = conversation.messages.get(role=Role.TOOL, tool_call_id=event["tool_call_id"])
    assert json.loads(stored.content) == event["result"]
    return event["result"]


def text_of(result: dict[str, Any]) -> str:
    assert result["success"] is True, result
    return result["content"][0]["text"]


def answer(client, row: Elicitation, action: str, **fields: Any):
    data: dict[str, Any] = {"action": action, "elicitation_id": row.pk}
    data.update({f"answer-{name}": value for name, value in fields.items()})
    url = reverse("chat:elicitation_answer", args=[row.conversation_id, row.pk])
    return client.post(url, data)


def page(client, conversation: Any) -> str:
    return client.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()

"""A real turn through chat.runs whose (scripted) model calls an MCP server's tool."""

from __future__ import annotations

import json

import pytest

from chat.core.models import Event, Role, RunStatus, StopReason, Wait
from chat.core.services import conversation_create
from chat.mcphost.models import McpServer
from chat.mcphost.records import McpCall
from chat.runs.services import run_cancel
from chat.usecases import message_post_user
from questionnaires.elicitations.services import elicitation_answer
from questionnaires.models import Elicitation
from tests.support.mcp_servers import free_port

pytestmark = pytest.mark.django_db

RESERVATION = {
    "date": "2026-05-01",
    "party_size": 4,
    "seating": "indoor",
    "dietary": [],
    "newsletter": False,
}


@pytest.fixture
def conversation(user):
    conversation = conversation_create(owner=user, title="MCP", agent="scripted")
    conversation.state = {"script": "mcp_demo"}
    conversation.save(update_fields=["state"])
    return conversation


def events(conversation, name):
    return [e.data for e in Event.objects.filter(conversation=conversation, name=name)]


def answer_card(conversation, **fields):
    card = Elicitation.objects.get(conversation=conversation, status="pending")
    data = {f"answer-{k}": [str(v)] for k, v in fields.items()}
    return elicitation_answer(elicitation=card, action="accept", data=data, user=conversation.owner)


def test_the_model_calls_an_mcp_tool_the_run_suspends_and_the_answer_resumes_it(conversation):
    """The demo server speaks 2026-07-28: its question comes back in the call's result;
    the run suspends (no worker waits), the answer queues it again, and the next attempt
    re-issues the call with the answer."""
    McpServer.objects.create(name="demo", url="builtin:demo", agents=["scripted"])
    message_post_user(conversation=conversation, content="A table, please")
    run = conversation.runs.get()
    assert run.status == RunStatus.SUSPENDED and not run.stop_reason, run.error
    assert Wait.objects.get(run=run).kind == "elicitation"
    (call,) = events(conversation, "tool_call")
    assert call["name"] == "demo__reserve_table"
    assert events(conversation, "tool_result") == []
    assert [e["run_id"] for e in events(conversation, "run_suspended")] == [run.pk]
    # The text that introduces the question comes before the card (issue 23 bug 3).
    intro, card = conversation.messages.filter(role=Role.ASSISTANT).order_by("seq")[:2]
    assert intro.tool_calls and (card.metadata or {}).get("kind") == "elicitation"
    answer_card(conversation, date="2026-05-01", party_size=4, seating="indoor")
    run.refresh_from_db()
    assert run.stop_reason == StopReason.COMPLETED, run.error
    assert run.attempts == 2
    assert [e["run_id"] for e in events(conversation, "run_resumed")] == [run.pk]
    (result,) = events(conversation, "tool_result")
    assert result["success"] is True and "for 4 on 2026-05-01" in json.dumps(result["result"])
    tool_message = conversation.messages.get(role=Role.TOOL)
    assert tool_message.tool_call_id == call["tool_call_id"]
    assert McpCall.objects.get().state == "done"
    reply = conversation.messages.filter(role=Role.ASSISTANT).last()
    assert reply.content == "Done: your table is reserved."
    assert not Wait.objects.filter(status="open").exists()


def test_stop_ends_a_suspended_run_and_its_card(conversation):
    McpServer.objects.create(name="demo", url="builtin:demo", agents=["scripted"])
    message_post_user(conversation=conversation, content="A table, please")
    run = conversation.runs.get()
    run_cancel(conversation=conversation, run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert Elicitation.objects.get().status == "cancelled"
    assert not Wait.objects.filter(status="open").exists()


def test_a_server_down_is_a_visible_note_and_the_turn_goes_on(conversation):
    McpServer.objects.create(
        name="demo", url=f"http://127.0.0.1:{free_port()}/mcp", agents=["scripted"]
    )
    message_post_user(conversation=conversation, content="A table, please")
    run = conversation.runs.get()
    assert run.status == "finished"
    notes = [r for r in events(conversation, "tool_result") if r["name"] == "demo__*"]
    assert notes and notes[0]["result"]["error_code"] == "MCP_UNAVAILABLE"
    # The tool was not offered, so the model's call of it is an unknown-tool error result.
    (called,) = [
        r for r in events(conversation, "tool_result") if r["name"] == "demo__reserve_table"
    ]
    assert called["success"] is False and called["result"]["error_code"] == "UNKNOWN_TOOL"

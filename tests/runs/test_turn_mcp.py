"""A real turn through chat.runs whose (scripted) model calls an MCP server's tool."""

from __future__ import annotations

import json

import pytest

from chat.core.models import Event, Role, StopReason
from chat.core.services import conversation_create
from chat.mcphost.models import McpServer
from chat.usecases import message_post_user
from tests.support.fake_elicitations import Outcome, install
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


@pytest.fixture
def elicitations(monkeypatch):
    return install(monkeypatch)


def events(conversation, name):
    return [e.data for e in Event.objects.filter(conversation=conversation, name=name)]


def test_the_model_calls_an_mcp_tool_and_the_chat_shows_it(conversation, elicitations):
    McpServer.objects.create(name="demo", url="builtin:demo", agents=["scripted"])
    elicitations.answer = Outcome("accept", RESERVATION)
    message_post_user(conversation=conversation, content="A table, please")
    run = conversation.runs.get()
    assert run.stop_reason == StopReason.COMPLETED, run.error
    (call,) = events(conversation, "tool_call")
    assert call["name"] == "demo__reserve_table"
    (result,) = events(conversation, "tool_result")
    assert result["success"] is True and "for 4 on 2026-05-01" in json.dumps(result["result"])
    tool_message = conversation.messages.get(role=Role.TOOL)
    assert tool_message.tool_call_id == call["tool_call_id"]
    assert elicitations.opened[0]["tool_call_id"] == call["tool_call_id"]
    assert elicitations.opened[0]["run_id"] == run.pk
    reply = conversation.messages.filter(role=Role.ASSISTANT).last()
    assert reply.content == "Done: your table is reserved."


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

"""The bundled demo server, in process (`builtin:demo`)."""

from __future__ import annotations

import pytest

from chat.agent.tools.base import ToolContext
from chat.mcphost.models import McpServer
from chat.mcphost.tools import mcp_tools
from tests.support.fake_elicitations import Outcome

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_tools():
    McpServer.objects.create(name="demo", url="builtin:demo", agents=["scripted"])
    return {tool.name: tool for tool in mcp_tools("scripted").tools}


def test_reserve_table_asks_with_a_form(demo_tools, elicitations):
    elicitations.answer = Outcome(
        "accept",
        {
            "date": "2026-05-01",
            "party_size": 2,
            "seating": "terrace",
            "dietary": ["vegan", "gluten-free"],
            "newsletter": True,
        },
    )
    context = ToolContext(extra={"conversation_id": 1, "run_id": None}, call_id="c1")
    result = demo_tools["demo__reserve_table"].execute({}, context)
    assert "for 2 on 2026-05-01 (terrace)" in result["content"][0]["text"]
    schema = elicitations.opened[0]["requested_schema"]["properties"]
    assert schema["dietary"]["type"] == "array" and schema["newsletter"]["type"] == "boolean"
    assert schema["seating"]["enum"] == ["indoor", "terrace", "bar"]


def test_verify_email_uses_url_mode(demo_tools, elicitations):
    elicitations.answer = Outcome("accept")
    context = ToolContext(extra={"conversation_id": 1, "run_id": None}, call_id="c2")
    result = demo_tools["demo__verify_email"].execute({"email": "a@example.test"}, context)
    assert result["content"][0]["text"] == "a@example.test is verified."
    (opened,) = elicitations.opened
    assert opened["mode"] == "url" and elicitations.completed == [opened["remote_id"]]

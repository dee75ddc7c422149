"""MCP servers' tools as agent tools: naming, caching, failures, the elicitation adapter."""

from __future__ import annotations

import pytest

from chat.agent.tools.base import ToolContext
from chat.mcphost import tools as mcp_tools_module
from chat.mcphost.models import McpServer
from chat.mcphost.tools import mcp_tools, qualified_name
from tests.support.mcp_servers import dying_server, free_port

pytestmark = pytest.mark.django_db


def add_server(name, url, **kw):
    return McpServer.objects.create(
        name=name, url=url, agents=kw.pop("agents", ["openai", "scripted"]), **kw
    )


def context(call_id="call_1"):
    return ToolContext(extra={"conversation_id": 7, "run_id": None}, call_id=call_id)


def by_name(listing):
    return {tool.name: tool for tool in listing.tools}


def test_tools_are_named_server__tool_and_too_long_names_are_skipped(server_url, caplog):
    add_server("srv", server_url)
    tools = by_name(mcp_tools("scripted"))
    assert {"srv__add", "srv__book", "srv__slow"} <= set(tools)
    assert not any("far_too_long" in name for name in tools)
    assert "can't be offered" in caplog.text
    add = tools["srv__add"]
    assert add.idempotent is False and add.resumable is True
    assert add.description.startswith("[MCP server srv]")
    assert add.parameters["required"] == ["a", "b"]


def test_qualified_name_rules():
    assert qualified_name("s", "ok-tool_1") == "s__ok-tool_1"
    assert qualified_name("s", "has.dot") is None
    assert qualified_name("s", "x" * 62) is None


def test_only_enabled_servers_for_the_agent(server_url):
    add_server("off", server_url, enabled=False)
    add_server("onlyopenai", server_url, agents=["openai"])
    assert mcp_tools("scripted").tools == ()
    assert by_name(mcp_tools("openai"))


def test_listing_is_cached_and_refreshed_when_the_row_changes(server_url, monkeypatch):
    server = add_server("srv", server_url)
    calls = []
    real = mcp_tools_module.client.tools_list
    monkeypatch.setattr(
        mcp_tools_module.client, "tools_list", lambda ep: calls.append(1) or real(ep)
    )
    mcp_tools("scripted")
    mcp_tools("scripted")
    assert len(calls) == 1
    server.save()  # updated_at changes
    mcp_tools("scripted")
    assert len(calls) == 2


def test_a_server_down_at_listing_is_a_note_not_a_failure(server_url):
    add_server("down", f"http://127.0.0.1:{free_port()}/mcp")
    add_server("up", server_url)
    listing = mcp_tools("scripted")
    assert {n.server for n in listing.notes} == {"down"}
    assert listing.notes[0].code == "MCP_UNAVAILABLE"
    assert all(t.name.startswith("up__") for t in listing.tools)


def test_calls_and_error_results(server_url, settings):
    add_server("srv", server_url)
    tools = by_name(mcp_tools("scripted"))
    ok = tools["srv__add"].execute({"a": 1, "b": 2}, context())
    assert ok["success"] is True and ok["content"] == [{"type": "text", "text": "3"}]
    failed = tools["srv__fail"].execute({}, context())
    assert failed["success"] is False and failed["error_code"] == "MCP_TOOL_ERROR"
    assert "the tool broke" in failed["message"]
    settings.MCP_TOOL_TIMEOUT = 1.5
    slow = tools["srv__slow"].execute({"seconds": 30}, context())
    assert slow["error_code"] == "MCP_TIMEOUT"


def test_a_disabled_server_refuses_the_call(server_url):
    server = add_server("srv", server_url)
    tool = by_name(mcp_tools("scripted"))["srv__add"]
    McpServer.objects.filter(pk=server.pk).update(enabled=False)
    assert tool.execute({"a": 1, "b": 2}, context())["error_code"] == "MCP_SERVER_GONE"


def test_a_server_dying_mid_call_is_a_tool_error(settings):
    settings.MCP_TOOL_TIMEOUT = 10
    with dying_server() as (url, _process):
        add_server("dying", url)
        result = by_name(mcp_tools("scripted"))["dying__die"].execute({}, context())
    assert result["success"] is False
    assert result["error_code"] in {"MCP_UNAVAILABLE", "MCP_TIMEOUT"}


def test_outside_a_run_a_server_that_asks_is_told_the_chat_cant(server_url):
    add_server("srv", server_url)
    result = by_name(mcp_tools("scripted"))["srv__book"].execute({}, context())
    assert result["success"] is False and result["error_code"] == "MCP_PROTOCOL_ERROR"


def _fake_listing(monkeypatch, by_server: dict[str, list[dict]]):
    monkeypatch.setattr(mcp_tools_module, "_listing", lambda server: by_server.get(server.name, []))


def _entry(name, description="d", schema=None):
    return {"name": name, "description": description, "inputSchema": schema or {"type": "object"}}


def test_a_turn_offers_at_most_128_tools_builtins_first(monkeypatch, caplog, settings):
    """Issue 22: 3,000 tools from one server went to the model on every turn."""
    from chat.agent.tools import TOOLS
    from chat.mcphost.tools import listing_warnings

    settings.MCP_MAX_TOOLS = 128
    a = add_server("a-first", "builtin:demo")
    add_server("b-second", "builtin:demo")
    _fake_listing(
        monkeypatch,
        {
            "a-first": [_entry(f"t{n}") for n in range(100)],
            "b-second": [_entry(f"u{n}") for n in range(3000)],
        },
    )
    tools = mcp_tools("scripted").tools
    assert len(TOOLS) + len(tools) == 128
    names = [t.name for t in tools]
    assert names[:100] == [f"a-first__t{n}" for n in range(100)]  # admin order: by name
    assert names[100:] == [f"b-second__u{n}" for n in range(128 - len(TOOLS) - 100)]
    assert "a turn offers at most 128 tools" in caplog.text
    assert caplog.text.count("left out") <= 25  # a few lines, not 3,000
    assert listing_warnings(a) == []


def test_long_descriptions_are_cut_and_huge_schemas_left_out(monkeypatch, admin_client, settings):
    from chat.mcphost.tools import listing_warnings

    settings.MCP_TOOL_DESCRIPTION_MAX = 2000
    settings.MCP_TOOL_SCHEMA_MAX = 20000
    server = add_server("big", "builtin:demo")
    huge = {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(2000)}}
    _fake_listing(
        monkeypatch,
        {"big": [_entry("wordy", "w" * 50_000), _entry("huge", schema=huge), _entry("fine")]},
    )
    tools = by_name(mcp_tools("scripted"))
    assert set(tools) == {"big__wordy", "big__fine"}
    assert len(tools["big__wordy"].description) < 2100
    warnings = listing_warnings(server)
    assert any("'huge' left out" in w for w in warnings)
    assert any("'wordy': description cut" in w for w in warnings)
    page = admin_client.get(f"/admin/chat/mcpserver/{server.pk}/change/")
    assert b"&#x27;huge&#x27; left out" in page.content or b"'huge' left out" in page.content
    assert b"2 tools left out or cut" in admin_client.get("/admin/chat/mcpserver/").content


def test_a_huge_result_is_cut_with_a_note(settings):
    """Issue 22: 40 MB of structured content was stored and re-sent on every turn."""
    import json

    import mcp_types as types

    from chat.mcphost.results import call_result

    settings.CHAT_MAX_API_MESSAGE_CHARS = 200_000
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="x" * 50_000)],
        structuredContent={"rows": ["y" * 1000] * 1000},
    )
    data = call_result("srv", "dump", result)
    assert len(json.dumps(data, ensure_ascii=False)) <= 200_000
    assert data["truncated"] is True and "structured_content" not in data
    assert data["structured_content_excerpt"].startswith('{"rows": ["yyy')
    assert "was too long and was cut" in data["content"][-1]["text"]
    small = call_result("srv", "ok", types.CallToolResult(content=[], structuredContent={"a": 1}))
    assert small["structured_content"] == {"a": 1} and "truncated" not in small

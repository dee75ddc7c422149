"""Fixtures: real MCP servers (module-scoped) speaking 2025-11-25, 2026-07-28, and both
(a stock SDK server), and `run_tool`: a scripted turn that calls one of their tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chat.agent.events import ToolCall
from chat.agent.llm.scripted import Script, Step, Turn
from chat.core.services import conversation_create
from chat.mcphost.models import McpServer
from chat.runs import turn as turn_module
from chat.usecases import message_post_user
from tests.support import wait_for
from tests.support.mcp_servers import make_modern_server, make_server, make_stock_server, serve


@pytest.fixture(scope="module")
def server_url():
    with serve(make_server()) as url:
        yield url


@pytest.fixture(scope="module")
def modern_url():
    with serve(make_modern_server()) as url:
        yield url


@pytest.fixture(scope="module")
def stock_url():
    with serve(make_stock_server()) as url:
        yield url


@pytest.fixture
def run_tool(user, settings, monkeypatch):
    """`run_tool(tool, url, arguments=None, owner=user)`: a scripted turn in a thread
    whose model calls `srv__TOOL` on the server at `url`, then says "Done."."""
    settings.AGENT_RUNNER = "thread"

    def begin(tool: str, url: str, arguments: dict[str, Any] | None = None, owner=None) -> Any:
        McpServer.objects.update_or_create(
            name="srv", defaults={"url": url, "agents": ["scripted"], "enabled": True}
        )
        call = ToolCall("", f"srv__{tool}", json.dumps(arguments or {}))
        script = Script(steps=(Step((Turn("Asking the server.", (call,)), Turn("Done."))),))
        monkeypatch.setattr(turn_module, "script_load", lambda name, lang="en": script)
        conversation = conversation_create(owner=owner or user, agent="scripted")
        message_post_user(conversation=conversation, content="go")
        return conversation

    yield begin
    for run in turn_module.Run.objects.filter(status__in=["queued", "running", "suspended"]):
        turn_module.Run.objects.filter(pk=run.pk).update(cancel_requested=True)
    from chat.runs.waits import run_waits_end

    for run in turn_module.Run.objects.filter(status="suspended"):
        run_waits_end(run)
    wait_for(
        lambda: (
            not turn_module.Run.objects.filter(
                status__in=["queued", "running", "suspended"]
            ).exists()
        ),
        "every run to stop",
    )

"""Issue 33 item 6, the app's own `/mcp/` server seen by the official SDK client (in
process): every tool carries MCP annotations that are true of it, and a call whose run
ended meanwhile is an error result and one log line — no SDK traceback."""

from __future__ import annotations

import logging

import anyio
import pytest
from mcp import Client

from chat.agent.tools import TOOLS
from chat.core.identity import RunIdentity
from chat.core.models import Run, RunStatus
from chat.core.services import conversation_create
from chat.edge import mcp as endpoint

pytestmark = pytest.mark.django_db(transaction=True)

ASK = {
    "question": "How is the pain?",
    "field": "pain_level",
    "options": [{"label": "None", "value": "none"}, {"label": "Mild", "value": "mild"}],
}


def _with_client(work):
    async def main():
        async with Client(endpoint.server, mode="legacy") as client:
            return await work(client)

    return anyio.run(main)


def test_every_tool_says_what_it_does_to_the_world():
    async def work(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in _with_client(work)}
    assert set(tools) == {t.name for t in TOOLS}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None, name
        # each shows a card in the conversation: it writes, adds only, adds again when
        # called again, and reaches nothing outside the chat
        assert (hints.read_only_hint, hints.destructive_hint) == (False, False), name
        assert (hints.idempotent_hint, hints.open_world_hint) == (False, False), name
        assert hints.title and tool.title == hints.title, name


def test_a_call_whose_run_ended_is_an_error_result_not_a_traceback(user, monkeypatch, caplog):
    conversation = conversation_create(owner=user, agent="external")
    run = Run.objects.create(conversation=conversation, status=RunStatus.FINISHED)
    identity = RunIdentity(conversation.pk, run.pk, user.pk)
    monkeypatch.setattr(endpoint, "_identity", lambda ctx: identity)

    async def work(client):
        return await client.call_tool("ask_user_options", ASK)

    with caplog.at_level(logging.INFO):
        result = _with_client(work)
    assert result.is_error is True
    assert result.structured_content["error_code"] == "run_not_active"
    assert [r for r in caplog.records if r.exc_info] == []
    lines = [r.getMessage() for r in caplog.records if "run_not_active" in r.getMessage()]
    assert lines == [f"MCP call refused: run_not_active (tool ask_user_options, run {run.pk})"]
    assert not conversation.messages.exists()  # nothing was shown

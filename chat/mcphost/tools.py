"""Admin-registered MCP servers' tools as the agent's `Tool` objects, named `SERVER__TOOL`.

`mcp_tools(agent)` lists, for every enabled server that allows the agent kind, its tools
(cached in Django's cache under the row's id and `updated_at`, so an admin's change
refreshes them at once; MCP_TOOLS_CACHE_SECONDS otherwise). A server that can't be listed
is skipped for the turn and reported in `Listing.notes` (the turn tells the model and
shows one failed tool line per outage) and the log; a failure opens the server's circuit
breaker (chat.mcphost.health), so a dead or hung server costs one timeout, not one per
turn. A tool whose name can't be offered to the model (OpenAI: `^[A-Za-z0-9_-]+$`, at
most 64 characters with the prefix) is skipped with a log line.

Calling one (`execute`) reads the server row again (an admin may have disabled it or
changed its secret since the listing) and hands the call to `calling.call_execute`. Every
failure becomes an error result the model sees (`success: false` and a stable
`error_code`: MCP_UNAVAILABLE, MCP_TIMEOUT, MCP_PROTOCOL_ERROR, MCP_TOOL_ERROR, …) and the
chat shows as a failed tool call; never a failed run. MCP tools are `resumable`: a
resumed run executes the call again and it picks up from its `McpCall` row.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import formats, timezone

from chat.agent.tools.base import Tool, ToolContext
from chat.mcphost import calling, client, health
from chat.mcphost.models import TOOL_NAME_MAX, McpServer
from chat.mcphost.records import McpServerState
from chat.mcphost.results import error_result

logger = logging.getLogger(__name__)

SEPARATOR = "__"
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
MCP_SERVER_GONE = "MCP_SERVER_GONE"


@dataclass(frozen=True)
class Note:
    """A server skipped for this turn, and why."""

    server: str
    code: str
    message: str
    # When the outage began (the breaker's last failure): the chat shows it once.
    since: str = ""


@dataclass(frozen=True)
class Listing:
    tools: tuple[Tool, ...]
    notes: tuple[Note, ...] = ()


endpoint = calling.endpoint


def qualified_name(server_name: str, tool_name: str) -> str | None:
    """`SERVER__TOOL`, or None when it can't be offered to the model."""
    name = f"{server_name}{SEPARATOR}{tool_name}"
    if not TOOL_NAME_RE.match(tool_name) or len(name) > TOOL_NAME_MAX:
        return None
    return name


def _cache_key(server: McpServer) -> str:
    return f"mcphost:tools:{server.cache_version}"


def _outage(state: McpServerState) -> str:
    """Names the outage (it began after the last success): the chat says it once."""
    last = state.last_success_at
    return f"{state.server_id}-{int(last.timestamp()) if last else 0}"


def _listing(server: McpServer) -> list[dict[str, Any]] | Note:
    """The server's tools as plain data (`name`, `description`, `inputSchema`), cached."""
    until = health.breaker_open_until(server.pk)
    if until is not None:
        state = health.state_of(server.pk)
        when = formats.date_format(timezone.localtime(until), "H:i:s")
        message = (
            f"The MCP server {server.name} failed lately ({state.last_error}); it is left "
            f"out until {when} UTC."
        )
        return Note(server.name, calling.MCP_CIRCUIT_OPEN, message, _outage(state))
    key = _cache_key(server)
    cached = cache.get(key)
    if cached is not None:
        return list(cached)
    try:
        tools, revision = client.tools_list(endpoint(server))
    except client.McpHostError as exc:
        health.record_failure(server.pk, exc.code, exc.message)
        return Note(server.name, exc.code, exc.message, _outage(health.state_of(server.pk)))
    health.record_success(server.pk, revision)
    data = [
        {"name": t.name, "description": t.description or "", "inputSchema": t.input_schema}
        for t in tools
    ]
    cache.set(key, data, settings.MCP_TOOLS_CACHE_SECONDS)
    return data


def mcp_tools(agent: str, resuming: Iterable[str] = ()) -> Listing:
    """The MCP tools a turn of agent kind `agent` may offer the model. `resuming`: tool
    names of the step a resumed attempt replays — a call already made picks up from its
    row even when its server is now left out (the breaker), or its listing changed."""
    tools: list[Tool] = []
    notes: list[Note] = []
    for server in McpServer.objects.filter(enabled=True).order_by("name"):
        if not server.allows(agent):
            continue
        listing = _listing(server)
        if isinstance(listing, Note):
            notes.append(listing)
            continue
        for entry in listing:
            name = qualified_name(server.name, entry["name"])
            if name is None:
                logger.warning(
                    "MCP server %s: tool %r skipped (its name can't be offered to the model)",
                    server.name,
                    entry["name"][:100],
                )
                continue
            tools.append(_tool(server, name, entry))
    offered = {tool.name for tool in tools}
    for name in dict.fromkeys(resuming):
        server_name, sep, remote = name.partition(SEPARATOR)
        if sep and name not in offered:
            tools.append(_resumed_tool(server_name, remote))
    return Listing(tuple(tools), tuple(notes))


def _resumed_tool(server_name: str, remote: str) -> Tool:
    """A call of the replayed step whose tool is not offered now: it ends from its row."""

    def execute(arguments: Any, context: ToolContext) -> dict[str, Any]:
        server = McpServer.objects.filter(name=server_name).first()
        if server is None or not isinstance(arguments, dict):
            message = f"The MCP server {server_name} is no longer available."
            return calling.call_finished(context) or error_result(MCP_SERVER_GONE, message)
        return calling.call_execute(server, remote, arguments, context)

    return Tool(
        name=f"{server_name}{SEPARATOR}{remote}",
        description=f"[MCP server {server_name}] {remote}",
        parameters={"type": "object", "properties": {}},
        execute=execute,
        resumable=True,
    )


def _parameters(schema: Any) -> dict[str, Any]:
    if isinstance(schema, dict) and schema.get("type") == "object":
        return {k: v for k, v in schema.items() if k != "title"}
    return {"type": "object", "properties": {}}


def _tool(server: McpServer, name: str, entry: dict[str, Any]) -> Tool:
    server_id, server_name, remote = server.pk, server.name, entry["name"]

    def execute(arguments: Any, context: ToolContext) -> dict[str, Any]:
        return tool_execute(server_id, server_name, remote, arguments, context)

    description = entry["description"] or f"The {remote} tool of the MCP server {server_name}."
    return Tool(
        name=name,
        description=f"[MCP server {server_name}] {description}",
        parameters=_parameters(entry["inputSchema"]),
        execute=execute,
        idempotent=False,
        resumable=True,
    )


def tool_execute(
    server_id: int, server_name: str, remote: str, arguments: Any, context: ToolContext
) -> dict[str, Any]:
    """Call `remote` on the server (chat.mcphost.calling): a result, never an exception,
    or `ToolSuspended` while the call waits for a person or the session host."""
    server = McpServer.objects.filter(pk=server_id, enabled=True).first()
    if server is None:
        message = f"The MCP server {server_name} is no longer available."
        return error_result(MCP_SERVER_GONE, message)
    if not isinstance(arguments, dict):
        return error_result("INVALID_ARGUMENTS", "The arguments must be a JSON object.")
    return calling.call_execute(server, remote, arguments, context)

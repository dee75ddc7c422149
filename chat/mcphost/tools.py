"""Admin-registered MCP servers' tools as the agent's `Tool` objects, named `SERVER__TOOL`.

`mcp_tools(agent)` lists, for every enabled server that allows the agent kind, its tools
(cached in Django's cache under the row's id and `updated_at`, so an admin's change
refreshes them at once; MCP_TOOLS_CACHE_SECONDS otherwise). A server that can't be listed
is skipped for the turn and reported in `Listing.notes` (the turn tells the model and
shows one failed tool line per outage) and the log; a failure opens the server's circuit
breaker (chat.mcphost.health), so a dead or hung server costs one timeout, not one per
turn. A tool whose name can't be offered to the model (OpenAI: `^[A-Za-z0-9_-]+$`, at
most 64 characters with the prefix) is skipped with a log line.

Bounds (model endpoints refuse more, and every turn of every user would carry it): a turn
offers at most MCP_MAX_TOOLS tools — the built-in ones first, then servers in the admin's
order (by name) — a description is cut at MCP_TOOL_DESCRIPTION_MAX characters, and a tool
whose parameter schema is over MCP_TOOL_SCHEMA_MAX characters (as JSON) is left out.
Whatever is left out or cut is logged and shown to admins on the server's page
(`listing_warnings`). A result is cut to CHAT_MAX_API_MESSAGE_CHARS (like an API message),
with a note the model and the card both show.

Calling one (`execute`) reads the server row again (an admin may have disabled it or
changed its secret since the listing) and hands the call to `calling.call_execute`. Every
failure becomes an error result the model sees (`success: false` and a stable
`error_code`: MCP_UNAVAILABLE, MCP_TIMEOUT, MCP_PROTOCOL_ERROR, MCP_TOOL_ERROR, …) and the
chat shows as a failed tool call; never a failed run. MCP tools are `resumable`: a
resumed run executes the call again and it picks up from its `McpCall` row.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import formats, timezone

from chat.agent.tools import TOOLS
from chat.agent.tools.base import Tool, ToolContext
from chat.mcphost import calling, client, health
from chat.mcphost.models import TOOL_NAME_MAX, McpServer
from chat.mcphost.records import McpServerState
from chat.mcphost.results import error_result

logger = logging.getLogger(__name__)

SEPARATOR = "__"
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
MCP_SERVER_GONE = "MCP_SERVER_GONE"
WARNINGS_SECONDS = 7 * 24 * 3600  # how long admins see what a listing left out


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
        {
            "name": t.name,
            "description": t.description or "",
            "inputSchema": t.input_schema,
            "title": _title(t),
        }
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
    room = max(settings.MCP_MAX_TOOLS - len(TOOLS), 0)
    for server in McpServer.objects.filter(enabled=True).order_by("name"):
        if not server.allows(agent):
            continue
        listing = _listing(server)
        if isinstance(listing, Note):
            notes.append(listing)
            continue
        offered, warnings = _offered(server, listing, room - len(tools))
        tools.extend(offered)
        _warn(server, warnings)
    names = {tool.name for tool in tools}
    for name in dict.fromkeys(resuming):
        server_name, sep, remote = name.partition(SEPARATOR)
        if sep and name not in names:
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


def _offered(
    server: McpServer, listing: list[dict[str, Any]], room: int
) -> tuple[list[Tool], list[str]]:
    """The server's tools that fit, and a line for each one left out or cut."""
    tools: list[Tool] = []
    warnings: list[str] = []
    for entry in listing:
        remote = str(entry["name"])[:100]
        name = qualified_name(server.name, entry["name"])
        schema = _parameters(entry["inputSchema"])
        if name is None:
            warnings.append(f"tool {remote!r} left out: its name can't be offered to a model")
        elif len(json.dumps(schema)) > settings.MCP_TOOL_SCHEMA_MAX:
            limit = settings.MCP_TOOL_SCHEMA_MAX
            warnings.append(f"tool {remote!r} left out: its schema is over {limit} characters")
        elif len(tools) >= room:
            cap = settings.MCP_MAX_TOOLS
            warnings.append(f"tool {remote!r} left out: a turn offers at most {cap} tools")
        else:
            if len(entry["description"]) > settings.MCP_TOOL_DESCRIPTION_MAX:
                cut = settings.MCP_TOOL_DESCRIPTION_MAX
                warnings.append(f"tool {remote!r}: description cut to {cut} characters")
            tools.append(_tool(server, name, entry, schema))
    return tools, warnings


def _warn(server: McpServer, warnings: list[str]) -> None:
    """Log what a listing left out (once per listing) and keep it for the admin page."""
    key = f"mcphost:warnings:{server.cache_version}"
    if warnings and cache.add(key, warnings, WARNINGS_SECONDS):
        for line in warnings[:20]:
            logger.warning("MCP server %s: %s", server.name, line)
        if len(warnings) > 20:
            logger.warning("MCP server %s: %d more tools left out", server.name, len(warnings) - 20)


def listing_warnings(server: McpServer) -> list[str]:
    """What the last listing of this server left out or cut (for admins)."""
    return list(cache.get(f"mcphost:warnings:{server.cache_version}") or [])


def _parameters(schema: Any) -> dict[str, Any]:
    if isinstance(schema, dict) and schema.get("type") == "object":
        return {k: v for k, v in schema.items() if k != "title"}
    return {"type": "object", "properties": {}}


def _title(tool: Any) -> str:
    """A tool's title for people (its `title`, else its annotations' title), bounded."""
    annotations = getattr(tool, "annotations", None)
    title = getattr(tool, "title", None) or getattr(annotations, "title", None) or ""
    return " ".join(str(title).split())[:80]


def _tool(server: McpServer, name: str, entry: dict[str, Any], schema: dict[str, Any]) -> Tool:
    server_id, server_name, remote = server.pk, server.name, entry["name"]

    def execute(arguments: Any, context: ToolContext) -> dict[str, Any]:
        return tool_execute(server_id, server_name, remote, arguments, context)

    description = entry["description"] or f"The {remote} tool of the MCP server {server_name}."
    if len(description) > settings.MCP_TOOL_DESCRIPTION_MAX:
        description = description[: settings.MCP_TOOL_DESCRIPTION_MAX - 1] + "…"
    return Tool(
        name=name,
        description=f"[MCP server {server_name}] {description}",
        parameters=schema,
        execute=execute,
        idempotent=False,
        resumable=True,
        title=str(entry.get("title") or ""),
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

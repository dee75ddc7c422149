"""Admin-registered MCP servers' tools as the agent's `Tool` objects, named `SERVER__TOOL`.

`mcp_tools(agent)` lists, for every enabled server that allows the agent kind, its tools
(cached in Django's cache under the row's id and `updated_at`, so an admin's change
refreshes them at once; MCP_TOOLS_CACHE_SECONDS otherwise). A server that can't be listed
is skipped for the turn and reported in `Listing.notes` (the turn shows each as a failed
tool line) and the log; a failure is remembered briefly so a dead server does not slow
every turn. A tool whose name can't be offered to the model (OpenAI: `^[A-Za-z0-9_-]+$`,
at most 64 characters with the prefix) is skipped with a log line.

Bounds (model endpoints refuse more, and every turn of every user would carry it): a turn
offers at most MCP_MAX_TOOLS tools — the built-in ones first, then servers in the admin's
order (by name) — a description is cut at MCP_TOOL_DESCRIPTION_MAX characters, and a tool
whose parameter schema is over MCP_TOOL_SCHEMA_MAX characters (as JSON) is left out.
Whatever is left out or cut is logged and shown to admins on the server's page
(`listing_warnings`). A result is cut to CHAT_MAX_API_MESSAGE_CHARS (like an API message),
with a note the model and the card both show.

Calling one (`execute`) reads the server row again (an admin may have disabled it or
changed its secret since the listing) and makes the call with `client.tool_call`. Every
failure becomes an error result the model sees (`success: false` and a stable
`error_code`: MCP_UNAVAILABLE, MCP_TIMEOUT, MCP_PROTOCOL_ERROR, MCP_TOOL_ERROR, …) and the
chat shows as a failed tool call; never a failed run. MCP tools are not idempotent: a
resumed run never calls one twice (chat.agent.tools.base).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from django.conf import settings
from django.core.cache import cache

from chat.agent.tools import TOOLS
from chat.agent.tools.base import Tool, ToolContext
from chat.mcphost import client, elicit
from chat.mcphost.models import TOOL_NAME_MAX, McpServer

logger = logging.getLogger(__name__)

SEPARATOR = "__"
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
FAILURE_CACHE_SECONDS = 30
MCP_TOOL_ERROR = "MCP_TOOL_ERROR"
MCP_SERVER_GONE = "MCP_SERVER_GONE"
# The most text of one result the model sees (characters), and the most parts of it.
RESULT_TEXT_MAX = 20000
RESULT_PARTS_MAX = 100
WARNINGS_SECONDS = 7 * 24 * 3600  # how long admins see what a listing left out


@dataclass(frozen=True)
class Note:
    """A server skipped for this turn, and why."""

    server: str
    code: str
    message: str


@dataclass(frozen=True)
class Listing:
    tools: tuple[Tool, ...]
    notes: tuple[Note, ...] = ()


def endpoint(server: McpServer) -> client.Endpoint:
    return client.Endpoint(name=server.name, url=server.url, headers=server.request_headers())


def qualified_name(server_name: str, tool_name: str) -> str | None:
    """`SERVER__TOOL`, or None when it can't be offered to the model."""
    name = f"{server_name}{SEPARATOR}{tool_name}"
    if not TOOL_NAME_RE.match(tool_name) or len(name) > TOOL_NAME_MAX:
        return None
    return name


def _cache_key(server: McpServer) -> str:
    return f"mcphost:tools:{server.cache_version}"


def _listing(server: McpServer) -> list[dict[str, Any]] | Note:
    """The server's tools as plain data (`name`, `description`, `inputSchema`), cached."""
    key = _cache_key(server)
    cached = cache.get(key)
    if isinstance(cached, dict):
        return Note(server.name, cached["code"], cached["message"])
    if cached is not None:
        return list(cached)
    try:
        tools = client.tools_list(endpoint(server))
    except client.McpHostError as exc:
        note = Note(server.name, exc.code, exc.message)
        cache.set(key, {"code": exc.code, "message": exc.message}, FAILURE_CACHE_SECONDS)
        return note
    data = [
        {"name": t.name, "description": t.description or "", "inputSchema": t.input_schema}
        for t in tools
    ]
    cache.set(key, data, settings.MCP_TOOLS_CACHE_SECONDS)
    return data


def mcp_tools(agent: str) -> Listing:
    """The MCP tools a turn of agent kind `agent` may offer the model (within the caps)."""
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
    return Listing(tuple(tools), tuple(notes))


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
    )


def error_result(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "status": "error", "error_code": code, "message": message, **extra}


def tool_execute(
    server_id: int, server_name: str, remote: str, arguments: Any, context: ToolContext
) -> dict[str, Any]:
    """Call `remote` on the server; always a result, never an exception."""
    server = McpServer.objects.filter(pk=server_id, enabled=True).first()
    if server is None:
        message = f"The MCP server {server_name} is no longer available."
        return error_result(MCP_SERVER_GONE, message)
    if not isinstance(arguments, dict):
        return error_result("INVALID_ARGUMENTS", "The arguments must be a JSON object.")
    hooks = elicit.hooks(
        extra=context.extra, server_name=server_name, tool_name=remote, call_id=context.call_id
    )
    try:
        result = client.tool_call(endpoint(server), remote, arguments, hooks)
    except client.McpHostError as exc:
        if exc.code == client.MCP_URL_ELICITATION_REQUIRED:
            return url_elicitation_required(server_name, remote, exc, context)
        return error_result(exc.code, exc.message)
    return call_result(server_name, remote, result)


def _content(result: types.CallToolResult) -> tuple[list[dict[str, Any]], bool]:
    """The result's parts as the model sees them, and whether some were cut."""
    parts: list[dict[str, Any]] = []
    budget = RESULT_TEXT_MAX
    cut = len(result.content) > RESULT_PARTS_MAX
    for item in result.content[:RESULT_PARTS_MAX]:
        if isinstance(item, types.TextContent):
            text = item.text[:budget]
            cut |= len(text) < len(item.text)
            budget -= len(text)
            parts.append({"type": "text", "text": text})
        else:  # images, audio, resources: named, not inlined into the model's context
            parts.append({"type": item.type, "omitted": True})
    return parts, cut


def call_result(server_name: str, remote: str, result: types.CallToolResult) -> dict[str, Any]:
    content, cut = _content(result)
    if result.is_error:
        text = " ".join(p["text"] for p in content if p["type"] == "text")
        message = text or f"The tool {remote} of {server_name} failed."
        return error_result(MCP_TOOL_ERROR, message, server=server_name, tool=remote)
    data: dict[str, Any] = {
        "success": True,
        "server": server_name,
        "tool": remote,
        "content": content,
    }
    if result.structured_content is not None:
        data["structured_content"] = result.structured_content
    return _capped(data, cut)


def _capped(data: dict[str, Any], cut: bool) -> dict[str, Any]:
    """Keep a result within CHAT_MAX_API_MESSAGE_CHARS (as JSON), as an API message is:
    structured content that doesn't fit is replaced by the start of its JSON text. A cut
    result says so in a last text part, which the model reads and the card shows."""
    limit = settings.CHAT_MAX_API_MESSAGE_CHARS
    size = len(json.dumps(data, ensure_ascii=False))
    if size > limit and "structured_content" in data:
        text = json.dumps(data.pop("structured_content"), ensure_ascii=False)
        room = max(limit - len(json.dumps(data, ensure_ascii=False)) - 1000, 0)
        data["structured_content_excerpt"] = text[:room]
        cut = True
    if cut:
        note = (
            f"[The result of {data['tool']} was too long and was cut: it had about {size:,} "
            f"characters; at most {RESULT_TEXT_MAX:,} characters of text, "
            f"{RESULT_PARTS_MAX} parts and {limit:,} characters in all are kept.]"
        )
        data["truncated"] = True
        data["content"].append({"type": "text", "text": note})
    return data


def url_elicitation_required(
    server_name: str, remote: str, exc: client.McpHostError, context: ToolContext
) -> dict[str, Any]:
    """-32042: the server needs the person to visit URL(s) first. Each is shown as a URL
    card (when the chat can ask); the model is told to retry after the person is done."""
    raw = exc.data.get("elicitations") if isinstance(exc.data, dict) else None
    shown = 0
    services = elicit.backend()
    conversation_id = context.extra.get("conversation_id")
    for item in raw if isinstance(raw, list) else []:
        try:
            params = types.ElicitRequestURLParams.model_validate(item)
        except ValueError:
            continue
        if services is None or not isinstance(conversation_id, int):
            break
        services.elicitation_open(
            conversation_id=conversation_id,
            run_id=context.extra.get("run_id"),
            server_name=server_name,
            tool_name=remote,
            tool_call_id=context.call_id,
            mode="url",
            message=params.message,
            url=params.url,
            remote_id=params.elicitation_id,
        )
        shown += 1
    message = (
        f"The tool {remote} of {server_name} needs the person to complete {shown} step(s) "
        "at a link shown in the chat first; call it again once they are done."
        if shown
        else f"The tool {remote} of {server_name} needs a browser step this chat can't show."
    )
    return error_result(client.MCP_URL_ELICITATION_REQUIRED, message)

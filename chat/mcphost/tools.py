"""Admin-registered MCP servers' tools as the agent's `Tool` objects, named `SERVER__TOOL`.

`mcp_tools(agent)` lists, for every enabled server that allows the agent kind, its tools
(cached in Django's cache under the row's id and `updated_at`, so an admin's change
refreshes them at once; MCP_TOOLS_CACHE_SECONDS otherwise). A server that can't be listed
is skipped for the turn and reported in `Listing.notes` (the turn shows each as a failed
tool line) and the log; a failure is remembered briefly so a dead server does not slow
every turn. A tool whose name can't be offered to the model (OpenAI: `^[A-Za-z0-9_-]+$`,
at most 64 characters with the prefix) is skipped with a log line.

Calling one (`execute`) reads the server row again (an admin may have disabled it or
changed its secret since the listing) and makes the call with `client.tool_call`. Every
failure becomes an error result the model sees (`success: false` and a stable
`error_code`: MCP_UNAVAILABLE, MCP_TIMEOUT, MCP_PROTOCOL_ERROR, MCP_TOOL_ERROR, …) and the
chat shows as a failed tool call; never a failed run. MCP tools are not idempotent: a
resumed run never calls one twice (chat.agent.tools.base).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from django.conf import settings
from django.core.cache import cache

from chat.agent.tools.base import Tool, ToolContext
from chat.mcphost import client, elicit
from chat.mcphost.models import TOOL_NAME_MAX, McpServer

logger = logging.getLogger(__name__)

SEPARATOR = "__"
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
FAILURE_CACHE_SECONDS = 30
MCP_TOOL_ERROR = "MCP_TOOL_ERROR"
MCP_SERVER_GONE = "MCP_SERVER_GONE"
# The most text of one result the model sees (characters).
RESULT_TEXT_MAX = 20000


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
    """The MCP tools a turn of agent kind `agent` may offer the model."""
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
    return Listing(tuple(tools), tuple(notes))


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


def _content(result: types.CallToolResult) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    budget = RESULT_TEXT_MAX
    for item in result.content:
        if isinstance(item, types.TextContent):
            text = item.text[:budget]
            budget -= len(text)
            parts.append({"type": "text", "text": text})
        else:  # images, audio, resources: named, not inlined into the model's context
            parts.append({"type": item.type, "omitted": True})
    return parts


def call_result(server_name: str, remote: str, result: types.CallToolResult) -> dict[str, Any]:
    content = _content(result)
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

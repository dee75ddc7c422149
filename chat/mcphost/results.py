"""What the model sees of an MCP tool call: its result, an error, or (-32042) the links
the person must visit first, shown as URL cards."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from django.conf import settings

from chat.mcphost import client, elicit

MCP_TOOL_ERROR = "MCP_TOOL_ERROR"
# The most text of one result the model sees (characters), and the most parts of it.
RESULT_TEXT_MAX = 20000
RESULT_PARTS_MAX = 100


def error_result(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "status": "error", "error_code": code, "message": message, **extra}


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
    server_name: str,
    remote: str,
    exc: client.McpHostError,
    *,
    conversation_id: int,
    run_id: int | None,
    call_id: str,
) -> dict[str, Any]:
    """-32042: the server needs the person to visit URL(s) first. Each is shown as a URL
    card (at most WAITS_PER_TOOL_CALL; a limit's refusal is shown once and ends the list);
    the model is told to retry after the person is done."""
    raw = exc.data.get("elicitations") if isinstance(exc.data, dict) else None
    items = raw if isinstance(raw, list) else []
    shown = 0
    services = elicit.backend()
    for item in items:
        try:
            params = types.ElicitRequestURLParams.model_validate(item)
        except ValueError:
            continue
        if services is None:
            break
        arguments = elicit.open_arguments(
            params,
            conversation_id=conversation_id,
            run_id=run_id,
            server_name=server_name,
            tool_name=remote,
            call_id=call_id,
        )
        try:
            services.elicitation_open(**arguments)
        except services.ElicitationRefused as refused:
            if refused.code.startswith("wait_limit_"):
                break
            continue
        shown += 1
    message = (
        f"The tool {remote} of {server_name} needs the person to complete {shown} step(s) "
        "at a link shown in the chat first; call it again once they are done."
        if shown
        else f"The tool {remote} of {server_name} needs a browser step this chat can't show."
    )
    if shown < len(items):
        message += f" {len(items) - shown} more link(s) were not shown (limits)."
    return error_result(client.MCP_URL_ELICITATION_REQUIRED, message)

"""What the model sees of an MCP tool call: its result, an error, or (-32042) the links
the person must visit first, shown as URL cards."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from chat.mcphost import client, elicit

MCP_TOOL_ERROR = "MCP_TOOL_ERROR"
# The most text of one result the model sees (characters).
RESULT_TEXT_MAX = 20000


def error_result(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "status": "error", "error_code": code, "message": message, **extra}


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

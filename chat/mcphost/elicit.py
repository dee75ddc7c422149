"""The one adapter between the MCP host and the elicitation card kind.

`backend()` finds `questionnaires.elicitations.services` (tests replace it);
`open_arguments` turns a server's `elicitation/create` parameters (form or URL mode) into
the arguments of `elicitation_open`. The 2026-07-28 path (chat.mcphost.calling) opens
cards for a round's input requests; the session host (chat.mcphost.host) opens them for a
2025-11-25 server's requests mid-call and hands the answers back.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types


def backend() -> Any | None:
    """The elicitation services module, or None where it is not installed."""
    try:
        from questionnaires.elicitations import services
    except ImportError:
        return None
    return services


def open_arguments(
    params: Any,
    *,
    conversation_id: int,
    run_id: int | None,
    server_name: str,
    tool_name: str,
    call_id: str,
) -> dict[str, Any]:
    """`elicitation_open`'s arguments for one request's parameters."""
    is_url = isinstance(params, types.ElicitRequestURLParams)
    schema = getattr(params, "requested_schema", None)
    return {
        "conversation_id": conversation_id,
        "run_id": run_id,
        "server_name": server_name,
        "tool_name": tool_name,
        "tool_call_id": call_id,
        "mode": "url" if is_url else "form",
        "message": str(getattr(params, "message", "") or ""),
        "requested_schema": None if is_url or schema is None else dict(schema),
        "url": params.url if is_url else None,
        "remote_id": params.elicitation_id if is_url else None,
    }

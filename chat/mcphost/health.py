"""Each MCP server's health: the revision it speaks, its last error and success, and a
circuit breaker. A failure or a timeout (connecting, listing, calling) opens the breaker
for MCP_BREAKER_COOLOFF seconds, doubling with each consecutive failure up to
MCP_BREAKER_MAX_COOLOFF; meanwhile the server's tools are left out of turns (with a note
to the model and one line in the conversation), so a hung server costs one timeout, not
one per turn. A success closes it. Admin shows the row on the server's page."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from chat.mcphost.records import McpServerState


def state_of(server_id: int) -> McpServerState:
    state, _created = McpServerState.objects.get_or_create(server_id=server_id)
    return state


def breaker_open_until(server_id: int) -> datetime | None:
    """When the server's breaker closes again, while it is open; else None."""
    until = (
        McpServerState.objects.filter(server_id=server_id, open_until__gt=timezone.now())
        .values_list("open_until", flat=True)
        .first()
    )
    return until


def record_success(server_id: int, revision: str = "") -> None:
    state_of(server_id)
    fields: dict[str, object] = {"last_success_at": timezone.now(), "failures": 0}
    fields["open_until"] = None
    if revision:
        fields["revision"] = revision[:20]
    McpServerState.objects.filter(server_id=server_id).update(**fields)


def record_failure(server_id: int, code: str, message: str) -> None:
    """A failure or a timeout: count it and open the breaker for the (growing) cool-off."""
    state_of(server_id)
    now = timezone.now()
    with transaction.atomic():
        McpServerState.objects.filter(server_id=server_id).update(failures=F("failures") + 1)
        failures = McpServerState.objects.get(server_id=server_id).failures
        cooloff = min(
            settings.MCP_BREAKER_COOLOFF * 2 ** max(failures - 1, 0),
            settings.MCP_BREAKER_MAX_COOLOFF,
        )
        McpServerState.objects.filter(server_id=server_id).update(
            last_error=f"{code}: {message}"[:500],
            last_error_at=now,
            open_until=now + timedelta(seconds=cooloff),
        )


# The most tools remembered per server (a server can't grow the row without bound).
LEGACY_TOOLS_MAX = 500


def mark_needs_back_channel(server_id: int, tool: str) -> None:
    """`tool` of this server asked over the pre-2026 back-channel: call it in 2025-11-25
    (through the session host) from now on."""
    state_of(server_id)
    with transaction.atomic():
        state = McpServerState.objects.select_for_update().get(server_id=server_id)
        tools = [str(t) for t in state.legacy_tools or []]
        if tool not in tools and len(tools) < LEGACY_TOOLS_MAX:
            McpServerState.objects.filter(pk=state.pk).update(legacy_tools=[*tools, tool])


def known_revision(server_id: int, tool: str) -> tuple[str, bool]:
    """(the revision last negotiated, whether `tool` must be called in 2025-11-25)."""
    row = (
        McpServerState.objects.filter(server_id=server_id)
        .values_list("revision", "legacy_tools")
        .first()
    )
    if row is None:
        return "", False
    return row[0], tool in (row[1] or [])

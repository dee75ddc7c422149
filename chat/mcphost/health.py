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


def mark_legacy_only(server_id: int) -> None:
    """A tool of this server asked over the pre-2026 back-channel: speak 2025-11-25 to it
    (through the session host) from now on."""
    state_of(server_id)
    McpServerState.objects.filter(server_id=server_id).update(legacy_only=True)


def known_revision(server_id: int) -> tuple[str, bool]:
    """(the revision last negotiated, whether the server must be spoken to in 2025-11-25)."""
    row = (
        McpServerState.objects.filter(server_id=server_id)
        .values_list("revision", "legacy_only")
        .first()
    )
    return row if row is not None else ("", False)

"""Health checks: is the database reachable, does the channel layer round-trip."""

from __future__ import annotations

import time

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection

from questionnaires.protocol.jsontypes import JsonValue


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


async def _layer_round_trip() -> None:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")
    channel = await layer.new_channel("healthz.")
    await layer.send(channel, {"type": "healthz.ping"})
    message = await layer.receive(channel)
    if message.get("type") != "healthz.ping":
        raise RuntimeError("channel layer returned a different message")


def health_report() -> dict[str, JsonValue]:
    checks: dict[str, dict[str, JsonValue]] = {}
    for name, check in (
        ("database", _check_database),
        ("channel_layer", async_to_sync(_layer_round_trip)),
    ):
        started = time.perf_counter()
        result: dict[str, JsonValue] = {"ok": True}
        try:
            check()
        except Exception as exc:
            result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        result["ms"] = round((time.perf_counter() - started) * 1000, 2)
        checks[name] = result
    return {"ok": all(c["ok"] is True for c in checks.values()), "checks": checks}

"""Test doubles and waits shared across test modules."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from channels.layers import InMemoryChannelLayer

T = TypeVar("T")
WAIT = 15.0


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = WAIT) -> T:
    """Poll `probe` until it returns something truthy (returned), or fail after `timeout`:
    a busy machine makes a test slower, never wrong."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.03)
    raise AssertionError(f"timed out waiting for {what}")


class BrokenLayer(InMemoryChannelLayer):
    """A channel layer whose every operation fails, like an unreachable Redis."""

    async def send(self, channel, message):
        raise ConnectionError("layer down")

    async def group_send(self, group, message):
        raise ConnectionError("layer down")

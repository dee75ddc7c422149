"""Test doubles shared across test modules."""

from __future__ import annotations

from channels.layers import InMemoryChannelLayer


class BrokenLayer(InMemoryChannelLayer):
    """A channel layer whose every operation fails, like an unreachable Redis."""

    async def send(self, channel, message):
        raise ConnectionError("layer down")

    async def group_send(self, group, message):
        raise ConnectionError("layer down")

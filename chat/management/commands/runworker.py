"""`manage.py runworker agent-runs`, hardened.

channels' worker exits when one receive from the layer fails (a Redis read timing out
on a busy machine), which would drop the runs it had started. This one logs the error,
waits a moment and receives again; messages are safe meanwhile (channels_redis keeps
them in a backup queue until they are received).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from channels.management.commands.runworker import Command as ChannelsRunworker
from channels.worker import Worker

logger = logging.getLogger(__name__)
RETRY_SECONDS = 1.0


class ResilientWorker(Worker):
    async def listener(self, channel: str) -> None:
        while True:
            try:
                message: dict[str, Any] = await self.channel_layer.receive(channel)
            except Exception:
                logger.warning("receive on %s failed; retrying", channel, exc_info=True)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if not message.get("type"):
                logger.error("dropped a message without a type on %s", channel)
                continue
            scope = {"type": "channel", "channel": channel}
            queue = self.get_or_create_application_instance(channel, scope)
            await queue.put(message)


class Command(ChannelsRunworker):
    help = "Run a channels worker (agent runs: `runworker agent-runs`) that survives layer errors."
    worker_class = ResilientWorker

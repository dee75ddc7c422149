"""Agent runs on a channels worker (`manage.py runworker agent-runs`).

The worker process receives `run.execute` messages and runs each in a thread of its own
pool, so one slow model call doesn't hold up the other runs in the queue.
"""

from __future__ import annotations

import asyncio
from typing import Any

from asgiref.sync import sync_to_async
from channels.consumer import AsyncConsumer
from django.conf import settings

AGENT_RUNS_CHANNEL = "agent-runs"
_slots: asyncio.Semaphore | None = None
_tasks: set[asyncio.Task[None]] = set()


def _semaphore() -> asyncio.Semaphore:
    global _slots
    if _slots is None:
        _slots = asyncio.Semaphore(settings.AGENT_WORKER_CONCURRENCY)
    return _slots


class AgentRunConsumer(AsyncConsumer):
    async def run_execute(self, message: dict[str, Any]) -> None:
        task = asyncio.ensure_future(_execute(int(message["run_id"])))
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)


async def _execute(run_id: int) -> None:
    from chat.agent.dispatch import execute_in_thread

    async with _semaphore():
        await sync_to_async(execute_in_thread, thread_sensitive=False)(run_id)

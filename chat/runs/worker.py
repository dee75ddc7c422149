"""Agent runs on a channels worker (`manage.py runworker agent-runs`).

A plain ASGI application for the `channel` scope: the worker hands it every message of
the `agent-runs` channel, and each `run.execute` runs in a thread of its own (bounded by
AGENT_WORKER_CONCURRENCY), so one slow model call doesn't hold up the queue. Unlike a
channels consumer, it listens on no channel of its own, so a failing layer read can't
take it (and the messages it was handed) down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings

from chat.runs.dispatch import execute_in_thread

logger = logging.getLogger(__name__)
_tasks: set[asyncio.Task[None]] = set()


async def agent_runs_application(
    scope: MutableMapping[str, Any],
    receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
    send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
) -> None:
    slots = asyncio.Semaphore(settings.AGENT_WORKER_CONCURRENCY)
    while True:
        message = await receive()
        if message.get("type") != "run.execute":
            logger.warning("ignored %r on %s", message.get("type"), scope.get("channel"))
            continue
        task = asyncio.ensure_future(_execute(int(message["run_id"]), slots))
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)


async def _execute(run_id: int, slots: asyncio.Semaphore) -> None:
    async with slots:
        await sync_to_async(execute_in_thread, thread_sensitive=False)(run_id)

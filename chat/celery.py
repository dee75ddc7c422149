"""The Celery application (AGENT_RUNNER=celery): agent runs and periodic housekeeping.

    celery -A chat worker      # executes runs (chat.runs.tasks.run_execute_task)
    celery -A chat beat        # schedules chat.runs_reap, chat.events_prune, …
    celery -A chat inspect active

Configuration is the `CELERY_*` block of chat/settings.py (broker = REDIS_URL with the
next database number unless CELERY_BROKER_URL is set; late acks, redelivery when a worker
process dies, prefetch 1, time limits, visibility timeout). Tasks live in chat/runs/tasks.py.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import signal
import threading

from celery import Celery
from celery.signals import worker_process_init
from kombu.transport import redis as kombu_redis

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chat.settings")

app = Celery("chat")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["chat.runs"])

logger = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1


@worker_process_init.connect
def _wake_streams_from_one_loop(**_kwargs: object) -> None:
    """Stream wake-ups (chat.core.realtime.wake) from a pool process go through one event loop
    kept for the process: the Redis layer then reuses its connection instead of opening
    one per event in a throw-away loop (~0.4 ms instead of ~5 ms per event)."""
    from chat.core.realtime import register_stream_loop

    async def register() -> None:
        register_stream_loop()

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="stream-wakeups", daemon=True).start()
    asyncio.run_coroutine_threadsafe(register(), loop).result(timeout=5)


@worker_process_init.connect
def _die_with_the_worker(**_kwargs: object) -> None:
    """A pool process ends when its worker's main process is killed: an orphan would keep
    running a turn with no time limit while the reaper hands the run to another worker."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return
    try:
        ctypes.CDLL(libc_name, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the heartbeat fence still protects runs
        logger.debug("prctl(PR_SET_PDEATHSIG) unavailable")


_kombu_restore_unacked = kombu_redis.QoS.restore_unacked


def _restore_unacked(self, client=None):  # type: ignore[no-untyped-def]
    """Keep a worker alive when Redis restarts under it.

    On a lost connection Celery closes the channel, whose QoS then puts back the messages
    it holds unacknowledged — through the connection kombu has just released, which
    raises AttributeError ('NoneType' object has no attribute 'hostname'); Celery calls
    that an unrecoverable error and the worker exits (seen in the load test's fault
    matrix). A restarted Redis kept none of those messages anyway, and the runs they
    carried are found again by the reaper (chat.runs.heartbeat), so the put-back is
    skipped and the worker reconnects."""
    try:
        return _kombu_restore_unacked(self, client)
    except AttributeError:
        logger.warning("broker connection gone: unacknowledged messages not put back")
        self._delivered.clear()
        return None


kombu_redis.QoS.restore_unacked = _restore_unacked

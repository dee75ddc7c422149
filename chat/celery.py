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
import logging.config
import os
import signal
import threading

from celery import Celery
from celery.signals import setup_logging, worker_process_init, worker_process_shutdown
from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chat.settings")

app = Celery("chat")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["chat.runs", "chat.inbox"])

logger = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1


@setup_logging.connect
def _project_logging(**_kwargs: object) -> None:
    """Workers and beat log the way the web workers do (`settings.LOGGING`: with
    LOG_FORMAT=json every line JSON), Python warnings included (Celery's own warnings, e.g.
    running as root, came out as plain text lines between the JSON ones)."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    logging.captureWarnings(True)


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


@worker_process_shutdown.connect
def _metrics_process_exit(**_kwargs: object) -> None:
    """A pool process that ends (a restart, a shutdown) drops its live gauges."""
    from chat.obs.metrics import process_exit

    process_exit()


# kombu's private method, wrapped below (the stubs don't declare it).
_kombu_connparams = kombu_redis.Channel._connparams  # type: ignore[attr-defined]


def _connparams(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Keep a worker alive when Redis restarts under it.

    After a lost connection kombu still uses the closed channel — to put back the
    messages it held unacknowledged, to acknowledge a task that finished meanwhile — and
    the released connection makes that an AttributeError ("'NoneType' object has no
    attribute 'client'" / "'hostname'"), which Celery calls an unrecoverable error: the
    worker exits (seen in the load test's fault matrix). Said as what it is, a connection
    error, it is logged and the worker reconnects. (A restarted Redis kept none of those
    messages; the runs they carried are found again by the reaper, chat.runs.heartbeat.)"""
    if self.connection is None or self.connection.client is None:
        raise RedisConnectionError("the broker connection of this channel is closed")
    return _kombu_connparams(self, *args, **kwargs)


kombu_redis.Channel._connparams = _connparams  # type: ignore[attr-defined]

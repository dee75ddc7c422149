"""Runs prove they are alive; runs whose process died are found and failed visibly.

A running run's heartbeat is refreshed by a small thread while its turn executes. A run
still `running` with an old heartbeat (its worker was killed), or `queued` with nobody
taking it, is marked failed with `worker_lost`, so the chat offers a retry instead of
spinning forever.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import Q
from django.utils import timezone

from chat.core.models import EXTERNAL_WORKER, Run, RunStatus, StopReason
from chat.core.services import event_emit

WORKER_ID = f"{socket.gethostname()}:{os.getpid()}"


def run_claim(*, run_id: int) -> bool:
    """Atomically take a queued run for this process; False if someone else has it."""
    now = timezone.now()
    claimed = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=now, heartbeat_at=now, worker=WORKER_ID
    )
    return claimed == 1


@contextmanager
def heartbeat(*, run_id: int, interval: float | None = None) -> Iterator[None]:
    """Refresh the run's heartbeat every `interval` seconds while the block runs."""
    interval = interval or max(settings.AGENT_HEARTBEAT_TIMEOUT / 3, 0.05)
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(interval):
                Run.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
                    heartbeat_at=timezone.now()
                )
        finally:
            close_old_connections()

    thread = threading.Thread(target=beat, name=f"heartbeat-{run_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def run_reap_stale(*, conversation_id: int | None = None) -> list[int]:
    """Fail runs whose worker is gone; returns their ids."""
    now = timezone.now()
    dead_running = (
        Q(status=RunStatus.RUNNING)
        & ~Q(worker=EXTERNAL_WORKER)
        & (
            Q(heartbeat_at__lt=now - timedelta(seconds=settings.AGENT_HEARTBEAT_TIMEOUT))
            | Q(heartbeat_at__isnull=True, started_at__lt=now - timedelta(seconds=60))
        )
    )
    expired_external = Q(
        status=RunStatus.RUNNING,
        worker=EXTERNAL_WORKER,
        created_at__lt=now - timedelta(seconds=settings.RUN_TOKEN_MAX_AGE_SECONDS),
    )
    never_taken = Q(
        status=RunStatus.QUEUED,
        created_at__lt=now - timedelta(seconds=settings.AGENT_QUEUE_TIMEOUT),
    )
    stale = Run.objects.filter(dead_running | never_taken | expired_external)
    if conversation_id is not None:
        stale = stale.filter(conversation_id=conversation_id)
    reaped = []
    for run in stale.only("id", "conversation_id", "status", "worker"):
        with transaction.atomic():
            code, message = (
                ("run_expired", "The external runtime's run expired.")
                if run.worker == EXTERNAL_WORKER
                else (
                    "worker_lost",
                    "The process running this turn stopped. Retry to run it again.",
                )
            )
            taken = Run.objects.filter(pk=run.pk, status=run.status).update(
                status=RunStatus.FAILED,
                stop_reason=StopReason.ERROR,
                error=f"{code}: {message}",
                finished_at=now,
            )
            if not taken:
                continue
            data = {"run_id": run.pk, "code": code, "message": message}
            event_emit(conversation_id=run.conversation_id, name="error", data=data)
            event_emit(
                conversation_id=run.conversation_id,
                name="run_finished",
                data={"run_id": run.pk, "stop_reason": StopReason.ERROR, "status": "failed"},
            )
        reaped.append(run.pk)
    return reaped

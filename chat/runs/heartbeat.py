"""Runs prove they are alive; runs whose process died are resumed or failed visibly.

Each time a worker takes a run is an *attempt* (`RunAttempt`, counted in `Run.attempts`).
A running run's heartbeat is refreshed by a small thread while its turn executes. A run
still `running` with an old heartbeat lost its worker: with Celery it is queued again and
the next attempt resumes the turn (chat.runs.resume), at most AGENT_MAX_ATTEMPTS times;
otherwise — or once the attempts are used up — it is failed with `worker_lost`, so the
chat offers a retry instead of spinning forever.

A run is `queued` in the same transaction as the message that asks for it and handed to
an executor after the commit (`Run.dispatched_at`). The process may die between the two,
or the broker may lose the message (a Redis restart): the row is the source of truth, so
a run still queued AGENT_HANDOFF_TIMEOUT after its hand-off is handed off again (backing
off while it keeps waiting); one nobody took within AGENT_QUEUE_TIMEOUT is failed.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, close_old_connections, transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from chat.core.dbfaults import connections_reset
from chat.core.models import EXTERNAL_WORKER, Run, RunAttempt, RunStatus, StopReason
from chat.core.runs import run_start
from chat.core.services import event_emit
from chat.core.waits import run_resume_if_ready, run_waits_lock
from chat.runs.slots import (
    person_lock,
    run_held,
    run_hold,
    run_owner,
    runs_release_after,
    runs_release_stale,
)

logger = logging.getLogger(__name__)


def worker_id() -> str:
    """This process (computed per call: Celery pool processes are forked)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _stale_before(now: datetime) -> datetime:
    return now - timedelta(seconds=settings.AGENT_HEARTBEAT_TIMEOUT)


def run_claim(*, run_id: int, task_id: str = "", worker: str = "") -> RunAttempt | None:
    """Take the run for a new attempt; None when it isn't ours to run.

    A queued run is free. A running run is taken over only when its current attempt is
    known to be gone: its heartbeat is older than AGENT_HEARTBEAT_TIMEOUT, or this is a
    redelivery of the very message (`task_id`) that attempt was running — a broker hands
    a message out again only after the worker process holding it died
    (task_reject_on_worker_lost) or after the visibility timeout, which is longer than a
    turn's hard time limit. The attempt it replaces is recorded as lost.

    A queued run that must wait its turn (chat.runs.slots) is held instead. Every take
    passes the lock on the person's row first, then the run's (as releases do): two
    takes can't both see the person's last free slot.
    """
    now = timezone.now()
    owner_id = run_owner(run_id)
    if owner_id is None:
        return None
    with transaction.atomic():
        person_lock(owner_id)
        run = Run.objects.select_for_update().filter(pk=run_id).first()
        if run is None:
            return None
        if run.status == RunStatus.RUNNING:
            current = run.attempt_log.order_by("-number").first()
            redelivered = bool(task_id) and current is not None and current.task_id == task_id
            stale = run.heartbeat_at is None or run.heartbeat_at < _stale_before(now)
            if not (redelivered or stale):
                return None
            run.attempt_log.filter(outcome=RunAttempt.Outcome.RUNNING).update(
                outcome=RunAttempt.Outcome.LOST, ended_at=now
            )
        elif run.status != RunStatus.QUEUED:
            return None
        elif run_held(run=run, owner_id=owner_id):  # one turn per chat, a few per person
            run_hold(run_id=run.pk)
            return None
        run.attempts += 1
        run.status = RunStatus.RUNNING
        run.started_at = run.started_at or now
        run.heartbeat_at = now
        run.worker = (worker or worker_id())[:100]
        run.save(update_fields=["attempts", "status", "started_at", "heartbeat_at", "worker"])
        return RunAttempt.objects.create(
            run=run, number=run.attempts, worker=worker or worker_id(), task_id=task_id
        )


@contextmanager
def heartbeat(
    *, run_id: int, attempt: int | None = None, interval: float | None = None
) -> Iterator[None]:
    """Refresh the run's heartbeat every `interval` seconds while the block runs (only
    while `attempt` is still the run's current one)."""
    interval = interval or max(settings.AGENT_HEARTBEAT_TIMEOUT / 3, 0.05)
    stop = threading.Event()
    mine = Run.objects.filter(pk=run_id, status=RunStatus.RUNNING)
    if attempt is not None:
        mine = mine.filter(attempts=attempt)

    def beat() -> None:
        try:
            while not stop.wait(interval):
                try:
                    mine.update(heartbeat_at=timezone.now())
                except DatabaseError:  # the connection dropped: the next beat reconnects
                    logger.warning("run %s: heartbeat failed", run_id, exc_info=True)
                    connections_reset()
        finally:
            close_old_connections()

    thread = threading.Thread(target=beat, name=f"heartbeat-{run_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


@dataclass(frozen=True)
class Reaped:
    failed: list[int] = field(default_factory=list)
    requeued: list[int] = field(default_factory=list)
    # Queued runs whose hand-off was lost, handed off again.
    redispatched: list[int] = field(default_factory=list)
    # Runs that waited their turn (chat.runs.slots) whose release was lost, handed off.
    released: list[int] = field(default_factory=list)


def run_reap_stale(*, conversation_id: int | None = None) -> Reaped:
    """Resume (Celery) or fail runs whose worker is gone, hand off again runs whose
    hand-off was lost, and fail runs nobody took."""
    now = timezone.now()
    # Every running run is looked at: one whose process is gone from this machine is
    # known dead at once; others are dead once their heartbeat is stale.
    running = Q(status=RunStatus.RUNNING) & ~Q(worker=EXTERNAL_WORKER)
    # A run an external runtime opened has no heartbeat: it expires with its tokens (and
    # ends sooner when idle: chat.runs.external).
    expired_external = Q(
        status=RunStatus.RUNNING,
        worker=EXTERNAL_WORKER,
        created_at__lt=now - timedelta(seconds=settings.RUN_TOKEN_MAX_AGE_SECONDS),
    )
    # Queued and not handed off lately: lost on the way (or waiting in a long queue; the
    # backoff in _handoff_lost keeps that case to a few duplicate messages).
    waiting = Q(
        status=RunStatus.QUEUED,
        held_at__isnull=True,
        handed_at__lt=now - timedelta(seconds=settings.AGENT_HANDOFF_TIMEOUT),
    )
    # A run queued again after a dead worker counts from then (heartbeat_at), a run that
    # waited its turn from its release (chat.runs.slots: held runs wait, never time out).
    never_taken = Q(
        status=RunStatus.QUEUED,
        held_at__isnull=True,
        queued_since__lt=now - timedelta(seconds=settings.AGENT_QUEUE_TIMEOUT),
    )
    stale = Run.objects.annotate(
        queued_since=Coalesce("heartbeat_at", "created_at"),
        handed_at=Coalesce("dispatched_at", "heartbeat_at", "created_at"),
    ).filter(running | waiting | never_taken | expired_external)
    if conversation_id is not None:
        stale = stale.filter(conversation_id=conversation_id)
    reaped = Reaped()
    resumable = settings.AGENT_RUNNER == "celery"
    fields = ("id", "conversation_id", "status", "attempts", "heartbeat_at", "worker")
    for run in stale.only(*fields, "created_at", "dispatched_at", "started_at"):
        alive = run.status == RunStatus.RUNNING and run.worker != EXTERNAL_WORKER
        if alive and not _dead(run, now):
            continue
        if run.worker == EXTERNAL_WORKER:
            if _fail_expired(run, now):
                reaped.failed.append(run.pk)
        elif run.status == RunStatus.QUEUED:
            queued_since = run.queued_since
            if queued_since < now - timedelta(seconds=settings.AGENT_QUEUE_TIMEOUT):
                if _fail_never_taken(run, now):
                    reaped.failed.append(run.pk)
            elif _handoff_lost(run, queued_since, now) and _redispatch(run, now):
                reaped.redispatched.append(run.pk)
        elif resumable and _lost_attempts(run) < settings.AGENT_MAX_ATTEMPTS:
            if _requeue(run, now):
                reaped.requeued.append(run.pk)
        elif _fail_lost(run, now):
            reaped.failed.append(run.pk)
    if conversation_id is None:
        reaped.released.extend(runs_release_stale())
    return reaped


def _lost_attempts(run: Run) -> int:
    """Attempts a dead worker ended, this one included (a suspension is no loss)."""
    lost = RunAttempt.objects.filter(run_id=run.pk, outcome=RunAttempt.Outcome.LOST).count()
    return lost + 1


def _dead(run: Run, now: datetime) -> bool:
    """Has a running run lost its process? Its heartbeat is stale, or the process that
    runs it was on this machine and exists no more (a SIGKILLed pool process, a crashed
    worker: known at once, not AGENT_HEARTBEAT_TIMEOUT later)."""
    if run.heartbeat_at is None:  # never beat: dead a minute after it started
        return run.started_at is not None and run.started_at < now - timedelta(seconds=60)
    return run.heartbeat_at < _stale_before(now) or process_gone(run.worker)


def process_gone(worker: str) -> bool:
    """`worker` (host:pid, or a Celery node@host:pid) names a process on this machine
    that no longer exists. False when it is elsewhere or can't be told."""
    node, _, pid = worker.rpartition(":")
    if node.rpartition("@")[2] != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, but not ours to signal
        return False
    return False


def _handoff_lost(run: Run, queued_since: datetime, now: datetime) -> bool:
    """Hand a queued run off again? After AGENT_HANDOFF_TIMEOUT, then after twice as long
    each time (a run waiting in a long but healthy queue costs a few duplicate messages,
    which `run_claim` turns away; a lost one is found again within seconds)."""
    handed = run.dispatched_at or queued_since
    waited_before = max((handed - queued_since).total_seconds(), 0.0)
    since = (now - handed).total_seconds()
    return since >= max(settings.AGENT_HANDOFF_TIMEOUT, waited_before)


def _redispatch(run: Run, now: datetime) -> bool:
    """Hand the run off again, unless another reaper just did."""
    mine = Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED)
    if run.dispatched_at is None:
        mine = mine.filter(dispatched_at__isnull=True)
    else:
        mine = mine.filter(dispatched_at=run.dispatched_at)
    if not mine.update(dispatched_at=now):
        return False
    logger.warning("run %s was queued but never taken; handing it off again", run.pk)
    run_start(run_id=run.pk, again=True)  # settings.RUN_STARTER
    return True


def run_requeue(run: Run, now: datetime | None = None) -> bool:
    """Queue a run whose current attempt is gone (its worker died, or lost its database
    connection) again; the next attempt resumes its turn. False if it moved on meanwhile."""
    return _requeue(run, now or timezone.now())


def _requeue(run: Run, now: datetime) -> bool:
    with transaction.atomic():
        taken = Run.objects.filter(
            pk=run.pk, status=RunStatus.RUNNING, attempts=run.attempts
        ).update(status=RunStatus.QUEUED, heartbeat_at=now, worker="")
        if not taken:
            return False
        RunAttempt.objects.filter(run_id=run.pk, outcome=RunAttempt.Outcome.RUNNING).update(
            outcome=RunAttempt.Outcome.LOST, ended_at=now
        )
        logger.warning("run %s lost its worker (attempt %s); queued again", run.pk, run.attempts)
        run_start(run_id=run.pk, again=True)  # settings.RUN_STARTER
    return True


def run_suspend(*, run: Run, attempt: RunAttempt) -> bool:
    """The attempt ends with its turn waiting outside any process (a person, the MCP
    session host): the run is suspended — no worker holds it — or queued again at once
    when its waits were all closed meanwhile (an answer that beat the suspension: both
    sides lock the run row). False if the attempt was taken over."""
    now = timezone.now()
    with transaction.atomic():
        run_waits_lock(run)
        mine = Run.objects.filter(pk=run.pk, attempts=attempt.number, status=RunStatus.RUNNING)
        if not mine.update(status=RunStatus.SUSPENDED, worker=""):
            return False
        RunAttempt.objects.filter(pk=attempt.pk).update(
            outcome=RunAttempt.Outcome.SUSPENDED, ended_at=now
        )
        event_emit(
            conversation_id=run.conversation_id, name="run_suspended", data={"run_id": run.pk}
        )
        run_resume_if_ready(run_id=run.pk)
    runs_release_after(run_id=run.pk)  # a suspended turn holds no worker and no slot
    return True


def _fail_expired(run: Run, now: datetime) -> bool:
    return run_fail(
        run_id=run.pk,
        conversation_id=run.conversation_id,
        expected_status=run.status,
        code="run_expired",
        error="run_expired: the external runtime's run expired.",
        message="The external runtime's run expired.",
        now=now,
    )


def _fail_never_taken(run: Run, now: datetime) -> bool:
    seconds = round(settings.AGENT_QUEUE_TIMEOUT)
    return run_fail(
        run_id=run.pk,
        conversation_id=run.conversation_id,
        expected_status=run.status,
        code="queue_timeout",
        error=f"queue_timeout: no worker took this turn within {seconds} seconds.",
        message=f"No worker took this turn within {seconds} seconds "
        "(the work queue may be down). Retry in a moment.",
        now=now,
    )


def _fail_lost(run: Run, now: datetime) -> bool:
    if run.attempts > 1:
        error = f"worker_lost: the process running this turn stopped {run.attempts} times."
    else:
        error = "worker_lost: the process running this turn stopped."
    return run_fail(
        run_id=run.pk,
        conversation_id=run.conversation_id,
        expected_status=run.status,
        code="worker_lost",
        error=error,
        message="The process running this turn stopped. Retry to run it again.",
        now=now,
    )


def run_fail(
    *,
    run_id: int,
    conversation_id: int,
    expected_status: str,
    code: str,
    error: str,
    message: str,
    now: datetime | None = None,
) -> bool:
    """Fail a run that no attempt is executing, visibly: `error` + `run_finished` events,
    so the chat shows the reason and Retry. False if its status changed meanwhile."""
    now = now or timezone.now()
    with transaction.atomic():
        taken = Run.objects.filter(pk=run_id, status=expected_status).update(
            status=RunStatus.FAILED,
            stop_reason=StopReason.ERROR,
            error=error,
            finished_at=now,
            checkpoint={},
        )
        if not taken:
            return False
        RunAttempt.objects.filter(run_id=run_id, outcome=RunAttempt.Outcome.RUNNING).update(
            outcome=RunAttempt.Outcome.LOST, ended_at=now
        )
        data = {"run_id": run_id, "code": code, "message": message}
        event_emit(conversation_id=conversation_id, name="error", data=data)
        event_emit(
            conversation_id=conversation_id,
            name="run_finished",
            data={"run_id": run_id, "stop_reason": StopReason.ERROR, "status": "failed"},
        )
    runs_release_after(run_id=run_id)  # the turns waiting behind it may start
    return True

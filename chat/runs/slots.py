"""Turns in flight: one at a time per conversation, a few at a time per person.

A message sent while its conversation's turn runs is accepted and its run queued behind
that turn (never refused: what the person typed is stored, and nothing depends on when
the turn's row was marked finished). A person has at most `AGENT_RUNS_PER_PERSON` turns
running; more wait, in the order they were asked for. Every runner (thread, inline,
Celery) takes a queued run through `run_claim`, which asks `run_held` under a lock on the
person's row (two takes can't both see the last free slot): a run that must wait stays
queued, marked `held_at`, and no worker waits for it. When a turn of the person's ends
(finished, failed, stopped, suspended), `runs_release` hands off — under the same lock —
the held runs that may start now, oldest first. The reaper never fails a held run for
its wait (`queue_timeout` counts from its release) and releases what a lost release
left waiting. Another person's turn never waits for these: the cap is per person, and a
held run takes no worker.

External runtimes' runs are theirs (no worker of ours): they neither count nor wait.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import DatabaseError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from chat.core.models import EXTERNAL_WORKER, Run, RunStatus
from chat.core.runs import run_start

logger = logging.getLogger(__name__)


def _running() -> QuerySet[Run]:
    """Turns a worker of ours runs. One whose heartbeat went stale lost its worker: it
    holds nothing back (the reaper resumes or fails it)."""
    alive = timezone.now() - timedelta(seconds=settings.AGENT_HEARTBEAT_TIMEOUT)
    running = Run.objects.filter(status=RunStatus.RUNNING, heartbeat_at__gte=alive)
    return running.exclude(worker=EXTERNAL_WORKER)


def person_lock(owner_id: int) -> None:
    """Serialise the takes and releases of one person's runs (inside a transaction)."""
    list(User.objects.select_for_update().filter(pk=owner_id).values_list("pk"))


def _startable(owner_id: int) -> list[int]:
    """The person's queued runs that nothing of their conversation's holds back: the
    oldest queued run of each conversation without a running turn, oldest first."""
    mine = _running().filter(conversation__owner_id=owner_id)
    busy = set(mine.values_list("conversation_id", flat=True))
    queued = Run.objects.filter(status=RunStatus.QUEUED, conversation__owner_id=owner_id)
    first: dict[int, int] = {}
    for pk, conversation_id in queued.order_by("pk").values_list("pk", "conversation_id"):
        if conversation_id not in busy:
            first.setdefault(conversation_id, pk)
    return sorted(first.values())


def _free_slots(owner_id: int) -> int | None:
    """Turns the person may still start (None: no cap)."""
    cap = settings.AGENT_RUNS_PER_PERSON
    if cap <= 0:
        return None
    return max(cap - _running().filter(conversation__owner_id=owner_id).count(), 0)


def run_owner(run_id: int) -> int | None:
    owner = Run.objects.filter(pk=run_id).values_list("conversation__owner_id", flat=True)
    return owner.first()


def run_held(*, run: Run, owner_id: int) -> bool:
    """Must this queued run wait? Its conversation runs a turn or has an older one
    queued, or the person's slots are taken — by running turns, or by older runs of
    theirs that may start now (they go first). A stopped run never waits: it is taken
    only to end."""
    if run.cancel_requested:
        return False
    startable = _startable(owner_id)
    if run.pk not in startable:
        return True
    free = _free_slots(owner_id)
    return free is not None and startable.index(run.pk) >= free


def run_hold(*, run_id: int) -> None:
    """The take found the run held: it waits, marked, for its release."""
    now = timezone.now()
    Run.objects.filter(pk=run_id, status=RunStatus.QUEUED, held_at__isnull=True).update(held_at=now)


def run_hold_at_door(*, run_id: int) -> bool:
    """Before a run is handed to an executor: hold it now if it must wait (True), so a
    flood of one person's messages never fills the queue every person's turns go through
    with takes that would only be turned away. Runs after the commit that stored the run,
    under the person's lock: a release either sees it held or comes after this check."""
    with transaction.atomic():
        run = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).first()
        if run is None:
            return False
        owner_id = run_owner(run_id)
        if owner_id is None:
            return False
        person_lock(owner_id)
        if not run_held(run=run, owner_id=owner_id):
            return False
        run_hold(run_id=run_id)
        return True


def runs_release(*, owner_id: int) -> list[int]:
    """Hand off the person's held runs that may start now; returns their ids. Their wait
    for a worker (the reaper's `queue_timeout`) counts from now."""
    now = timezone.now()
    with transaction.atomic():
        person_lock(owner_id)
        startable = _startable(owner_id)
        free = _free_slots(owner_id)
        chosen = startable if free is None else startable[:free]
        held = Run.objects.filter(pk__in=chosen, status=RunStatus.QUEUED, held_at__isnull=False)
        released = sorted(held.values_list("pk", flat=True))
        Run.objects.filter(pk__in=released).update(
            held_at=None, dispatched_at=now, heartbeat_at=now
        )
        for run_id in released:
            run_start(run_id=run_id, again=True)  # settings.RUN_STARTER (after the commit)
    return released


def runs_release_after(*, run_id: int) -> None:
    """After a run ended or stepped aside: release its person's waiting runs. Never fails
    the caller (its work is stored): a run left waiting is released by the reaper."""
    try:
        owner_id = run_owner(run_id)
        if owner_id is not None:
            runs_release(owner_id=owner_id)
    except DatabaseError:
        logger.warning(
            "run %s: could not release the runs waiting behind it", run_id, exc_info=True
        )


def runs_release_stale() -> list[int]:
    """The reaper's pass: release held runs whose release was lost (the process that
    ended the turn before them died first)."""
    owners = (
        Run.objects.filter(status=RunStatus.QUEUED, held_at__isnull=False)
        .values_list("conversation__owner_id", flat=True)
        .distinct()
    )
    released: list[int] = []
    for owner_id in list(owners):
        released += runs_release(owner_id=owner_id)
    return released

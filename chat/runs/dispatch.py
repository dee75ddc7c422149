"""Start agent runs: inline (tests), in a thread of the web process, or as a Celery task."""

from __future__ import annotations

import contextvars
import logging
import threading
import uuid
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, close_old_connections, transaction
from django.utils import timezone

from chat.core.models import Run, RunStatus
from chat.runs.runner import run_execute
from chat.runs.slots import run_hold_at_door
from chat.runs.tasks import run_execute_task

logger = logging.getLogger(__name__)


def run_dispatch(*, run_id: int, inline: bool = False, again: bool = False) -> None:
    """Execute the run per AGENT_RUNNER; `inline=True` runs it now, in this request
    (for offline agents whose turn is instant, so a page without JavaScript shows it);
    `again=True`: the reaper hands off a run whose hand-off or attempt was lost.

    The project's `RUN_STARTER` (the core starts the runs it queues with it,
    `chat.core.runs.run_start`). Nothing else happens in the caller's transaction (dead
    runs are the reaper's business)."""
    mode = "inline" if inline else settings.AGENT_RUNNER
    if mode == "inline":
        _execute(run_id)
    elif mode == "celery":
        transaction.on_commit(lambda: _unless_held(run_id, run_enqueue))
    else:
        transaction.on_commit(lambda: _unless_held(run_id, _start_thread))


def _unless_held(run_id: int, hand_off: Callable[..., None]) -> None:
    """Hand the run off, unless it must wait its turn (chat.runs.slots): then no queue
    message and no thread, its release hands it off. If that can't be told (the
    database is away), hand it off: the take decides again."""
    try:
        held = run_hold_at_door(run_id=run_id)
    except DatabaseError:
        logger.warning("run %s: could not tell whether it waits; handing it off", run_id)
        held = False
    if not held:
        hand_off(run_id=run_id)


def _handed_off(run_id: int) -> None:
    """Note the hand-off: a run still queued well after it was lost on the way (the
    reaper hands it off again, chat.runs.heartbeat). Runs after the commit: a failure
    here must not fail the request whose work is already stored (the reaper then goes
    by the run's creation time)."""
    try:
        Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(dispatched_at=timezone.now())
    except DatabaseError:
        logger.warning("run %s: could not note its hand-off", run_id, exc_info=True)


def run_enqueue(*, run_id: int) -> None:
    """Send the run to the Celery queue. If the broker can't be reached (restarting, say),
    the run stays queued: the reaper sends it again once the broker is back, and fails it
    visibly (`queue_timeout`, with Retry) if that takes longer than AGENT_QUEUE_TIMEOUT."""
    _handed_off(run_id)
    try:
        run_execute_task.apply_async(
            args=(run_id,),
            queue=settings.CELERY_TASK_DEFAULT_QUEUE,
            # A few quick tries, not Celery's default seconds-long retry in a request.
            retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.2},
        )
    except Exception:
        logger.warning("could not queue run %s; the reaper will send it again", run_id)


def _start_thread(*, run_id: int) -> None:
    _handed_off(run_id)
    # The thread carries the request's context (its log ids, its trace), as a Celery
    # task carries them in its message.
    context = contextvars.copy_context()
    threading.Thread(
        target=context.run, args=(execute_in_thread, run_id), name=f"run-{run_id}", daemon=True
    ).start()


def execute_in_thread(run_id: int) -> None:
    """Run in a thread that owns its database connection (the thread runner)."""
    close_old_connections()
    try:
        _execute(run_id)
    except Exception:
        logger.exception("run %s crashed", run_id)
    finally:
        close_old_connections()


def _execute(run_id: int) -> None:
    # A hand-off id of its own, like a queue message's: if this take loses its database
    # connection, it takes the run over again at once (chat.runs.heartbeat.run_claim).
    run_execute(run_id=run_id, task_id=f"local-{uuid.uuid4().hex}")

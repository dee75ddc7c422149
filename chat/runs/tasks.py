"""Celery tasks: execute an agent run, and the periodic housekeeping beat schedules.

The run task is acknowledged late and handed back to the broker when its worker process
dies (settings: CELERY_TASK_ACKS_LATE, CELERY_TASK_REJECT_ON_WORKER_LOST), so another
worker takes it over; `run_execute` then resumes the turn from its last persisted step
(chat.runs.resume). Each take is one RunAttempt; AGENT_MAX_ATTEMPTS bounds them.
"""

from __future__ import annotations

import logging
import os
from importlib import import_module

from celery import shared_task
from django.conf import settings

from chat.core.services import event_prune_deltas
from chat.runs.heartbeat import run_reap_stale
from chat.runs.runner import run_execute
from chat.runs.waits import waits_expire
from questionnaires.analytics.refresh import analytics_refresh

logger = logging.getLogger(__name__)


@shared_task(name="chat.run_execute", bind=True)
def run_execute_task(self, run_id: int) -> None:  # type: ignore[no-untyped-def]
    # (Celery's Django fixup recycles database connections around every task.)
    run_execute(
        run_id=run_id,
        task_id=self.request.id or "",
        worker=f"{self.request.hostname or 'celery'}:{os.getpid()}",
    )


@shared_task(name="chat.runs_reap")
def runs_reap() -> dict[str, list[int]]:
    """Resume runs whose worker died (or fail them visibly once their attempts are used),
    and hand off again runs whose hand-off was lost."""
    reaped = run_reap_stale()
    expired = waits_expire()
    if expired:
        logger.info("expired %s overdue waits", expired)
    if reaped.failed or reaped.requeued or reaped.redispatched or reaped.released:
        logger.warning(
            "reaped runs: requeued %s, handed off again %s, failed %s, released %s",
            reaped.requeued,
            reaped.redispatched,
            reaped.failed,
            reaped.released,
        )
    return {
        "failed": reaped.failed,
        "requeued": reaped.requeued,
        "redispatched": reaped.redispatched,
        "released": reaped.released,
    }


@shared_task(name="chat.events_prune")
def events_prune() -> int:
    """Drop streamed text fragments and progress notes older than EVENT_DELTA_MAX_AGE."""
    return event_prune_deltas(older_than=settings.EVENT_DELTA_MAX_AGE)


@shared_task(name="chat.analytics_refresh")
def analytics_refresh_task() -> int:
    """Questionnaire analytics: record the cards shown and settled since the last time."""
    result = analytics_refresh()
    return result.created + result.settled


@shared_task(name="chat.sessions_clear")
def sessions_clear() -> None:
    """Delete expired login sessions (what `manage.py clearsessions` does)."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()

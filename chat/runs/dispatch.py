"""Start agent runs: inline (tests), in a thread of the web process, or as a Celery task."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, transaction

from chat.core.models import Run, RunStatus
from chat.runs.heartbeat import run_fail, run_reap_stale
from chat.runs.runner import run_execute
from chat.runs.tasks import run_execute_task

logger = logging.getLogger(__name__)


def run_dispatch(*, run_id: int, inline: bool = False) -> None:
    """Execute the run per AGENT_RUNNER; `inline=True` runs it now, in this request
    (for offline agents whose turn is instant, so a page without JavaScript shows it).

    Registered as the core's run executor (`chat.core.runs.run_start`)."""
    # A run that is still marked running while its worker is gone would look active next
    # to the new one: fail the conversation's dead runs first.
    rows = Run.objects.filter(pk=run_id).values_list("conversation_id", flat=True)
    conversation_id = rows.first()
    if conversation_id is not None:
        run_reap_stale(conversation_id=conversation_id)
    mode = "inline" if inline else settings.AGENT_RUNNER
    if mode == "inline":
        _execute(run_id)
    elif mode == "celery":
        transaction.on_commit(lambda: run_enqueue(run_id=run_id))
    else:
        transaction.on_commit(lambda: _start_thread(run_id))


def run_enqueue(*, run_id: int) -> None:
    """Send the run to the Celery queue; if the broker can't be reached, the run fails
    at once with a visible reason (and Retry) instead of waiting for the queue timeout."""

    try:
        run_execute_task.apply_async(args=(run_id,), queue=settings.CELERY_TASK_DEFAULT_QUEUE)
    except Exception as exc:
        logger.exception("could not queue run %s", run_id)
        run = Run.objects.filter(pk=run_id).only("conversation_id").first()
        if run is not None:
            run_fail(
                run_id=run_id,
                conversation_id=run.conversation_id,
                expected_status=RunStatus.QUEUED,
                code="queue_unavailable",
                error=f"queue_unavailable: {type(exc).__name__}: {exc}",
                message="The assistant's work queue can't be reached. Retry in a moment.",
            )


def _start_thread(run_id: int) -> None:
    threading.Thread(
        target=execute_in_thread, args=(run_id,), name=f"run-{run_id}", daemon=True
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
    run_execute(run_id=run_id)

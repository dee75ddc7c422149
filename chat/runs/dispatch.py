"""Start agent runs: inline (tests), in a thread of the web process, or on a worker."""

from __future__ import annotations

import logging
import threading

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import close_old_connections, transaction

from chat.core.models import Run
from chat.runs.heartbeat import run_reap_stale
from chat.runs.runner import run_execute

logger = logging.getLogger(__name__)
# The channel-layer channel `manage.py runworker agent-runs` consumes.
AGENT_RUNS_CHANNEL = "agent-runs"


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
    elif mode == "worker":
        transaction.on_commit(lambda: _send_to_worker(run_id))
    else:
        transaction.on_commit(lambda: _start_thread(run_id))


def _send_to_worker(run_id: int) -> None:

    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("AGENT_RUNNER=worker needs a channel layer (set REDIS_URL)")
    async_to_sync(layer.send)(AGENT_RUNS_CHANNEL, {"type": "run.execute", "run_id": run_id})


def _start_thread(run_id: int) -> None:
    threading.Thread(
        target=execute_in_thread, args=(run_id,), name=f"run-{run_id}", daemon=True
    ).start()


def execute_in_thread(run_id: int) -> None:
    """Run in a thread that owns its database connection (thread runner, worker pool)."""
    close_old_connections()
    try:
        _execute(run_id)
    except Exception:
        logger.exception("run %s crashed", run_id)
    finally:
        close_old_connections()


def _execute(run_id: int) -> None:

    run_execute(run_id=run_id)

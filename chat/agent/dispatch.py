"""Start agent runs: inline (tests), in a thread of the web process, or on a worker."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, transaction

from chat.models import AgentKind, Conversation, Message, Run

logger = logging.getLogger(__name__)


def run_start_for_message(*, conversation: Conversation, message: Message) -> Run | None:
    """Create the run a new user message triggers; external conversations have none."""
    if conversation.agent == AgentKind.EXTERNAL:
        return None
    run = Run.objects.create(conversation=conversation, trigger_message=message)
    run_dispatch(run_id=run.pk)
    return run


def run_dispatch(*, run_id: int) -> None:
    mode = settings.AGENT_RUNNER
    if mode == "inline":
        _execute(run_id)
    else:
        transaction.on_commit(lambda: _start_thread(run_id))


def _start_thread(run_id: int) -> None:
    threading.Thread(target=_thread_main, args=(run_id,), name=f"run-{run_id}", daemon=True).start()


def _thread_main(run_id: int) -> None:
    close_old_connections()
    try:
        _execute(run_id)
    except Exception:
        logger.exception("run %s crashed", run_id)
    finally:
        close_old_connections()


def _execute(run_id: int) -> None:
    from chat.agent.runner import run_execute

    run_execute(run_id=run_id)

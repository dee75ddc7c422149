"""Run writes: stop a running turn, retry a failed or stopped one."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _

from chat.core.errors import ChatError, NotFound
from chat.core.models import (
    EXTERNAL_WORKER,
    Conversation,
    Message,
    Role,
    Run,
    RunStatus,
    StopReason,
)
from chat.core.runs import run_create
from chat.core.selectors import run_latest
from chat.core.services import event_emit
from chat.core.waits import run_waits_lock, waits_open
from chat.runs.dispatch import run_dispatch
from chat.runs.external import run_external_end
from chat.runs.waits import run_waits_end

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.SUSPENDED)
RETRYABLE = (RunStatus.FAILED, RunStatus.CANCELLED)


def run_get(*, conversation: Conversation, run_id: int) -> Run:
    try:
        return conversation.runs.select_related("trigger_message").get(pk=run_id)
    except (Run.DoesNotExist, ValueError, TypeError):
        raise NotFound() from None


def run_cancel(*, conversation: Conversation, run_id: int) -> Run:
    """Ask a turn to stop: a running one ends `cancelled` at its next step; a suspended
    one is queued again to end so; the run's waits end either way (also after its turn
    finished: a link a server asked for, say)."""
    run = run_get(conversation=conversation, run_id=run_id)
    active = run.status in ACTIVE
    if not active and not waits_open(run_id=run.pk):
        raise ChatError("run_not_active", _("This run has already finished."), status=409)
    # A turn queued behind another (chat.runs.slots) is taken at once to end, not when
    # its place comes.
    held = run.status == RunStatus.QUEUED and run.held_at is not None
    if active:  # (its own statement: a turn may hold the row, waiting for nothing of ours)
        Run.objects.filter(pk=run.pk).update(cancel_requested=True)
        run.cancel_requested = True
    if held:
        run_dispatch(run_id=run.pk)
    with transaction.atomic():
        run_waits_lock(run)  # (the conversation's row first, as the waits' writers)
        run_waits_end(run)
        if run.worker == EXTERNAL_WORKER:  # no loop of ours will see the request
            run_external_end(
                run_id=run.pk, status=RunStatus.CANCELLED, stop_reason=StopReason.CANCELLED
            )
    return run


def run_retry(*, conversation: Conversation, run_id: int) -> Run:
    """Run the turn again for the same user message (nothing the user wrote is re-sent)."""
    with transaction.atomic():
        run = run_get(conversation=conversation, run_id=run_id)
        latest = run_latest(conversation=conversation)
        if latest is None or latest.pk != run.pk or run.status not in RETRYABLE:
            raise ChatError(
                "run_not_retryable",
                _("Only the latest failed or stopped answer can be retried."),
                status=409,
            )
        if run.trigger_message is None:
            raise ChatError(
                "run_not_retryable", _("The message this answer replied to is gone."), status=409
            )
        _supersede(run)
        retry = run_create(conversation=conversation, trigger_message=run.trigger_message)
    run_dispatch(run_id=retry.pk)
    return retry


def _supersede(run: Run) -> None:
    """The retried turn's own messages (a partial reply, its tool steps, its error) leave
    the chat and the model's context: the new turn replaces them, it doesn't repeat them."""
    rows = list(Message.objects.filter(run=run, hidden=False).exclude(role=Role.USER))
    if not rows:
        return
    for row in rows:
        row.hidden = True
        row.metadata = {**(row.metadata or {}), "superseded": True}
    Message.objects.bulk_update(rows, ["hidden", "metadata"])
    # Every open page (the other tabs, an API client's stream) drops them too.
    event_emit(
        conversation_id=run.conversation_id,
        name="messages_superseded",
        data={"run_id": run.pk, "message_ids": [row.pk for row in rows]},
    )

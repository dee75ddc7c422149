"""The runs' side of waiting (chat.core.waits): the reaper expires overdue waits through
their kind, and Stop ends a run's waits, however its turn stands."""

from __future__ import annotations

import logging

from chat.core.models import Run, Wait, WaitKind, WaitStatus
from chat.core.waits import wait_close, waits_due, waits_open
from chat.mcphost import hosted
from chat.mcphost.records import McpCall
from chat.runs.external import runs_external_idle

logger = logging.getLogger(__name__)


def _elicitations() -> object | None:
    try:
        from questionnaires.elicitations import services
    except ImportError:
        return None
    return services


def _expire(wait: Wait) -> None:
    """Close one overdue wait the way its kind ends: an elicitation card expires (the
    server gets `cancel`), a call the session host never finished is interrupted, and
    the other kinds' cards simply stop counting as waiting."""
    kind, _, ref_id = wait.ref.partition(":")
    services = _elicitations()
    if wait.kind == WaitKind.ELICITATION and services is not None and ref_id.isdigit():
        services.elicitations_expire_due(ids=[int(ref_id)])  # type: ignore[attr-defined]
    elif wait.kind == WaitKind.MCP_CALL and ref_id.isdigit():
        call = McpCall.objects.filter(pk=int(ref_id)).first()
        if call is not None:
            hosted.call_interrupt(call, call.host)
    wait_close(ref=wait.ref, status=WaitStatus.EXPIRED)  # (a no-op if the kind closed it)


def waits_expire() -> int:
    """The reaper's sweep: every open wait past its deadline ends; plus the calls of a
    session host that died. Returns how many waits were expired."""
    due = waits_due()
    for wait in due:
        try:
            _expire(wait)
        except Exception:  # one bad row must not stop the sweep
            logger.exception("could not expire %s", wait)
    hosted.calls_interrupt_stale()
    runs_external_idle()
    return len(due)


def run_waits_end(run: Run) -> int:
    """Stop: the run's cards lock (the servers get `cancel`) and its other waits end, so
    a suspended run is queued again and its next attempt ends it as cancelled."""
    services = _elicitations()
    if services is not None:
        services.elicitations_end(run_id=run.pk, code="run_cancelled")  # type: ignore[attr-defined]
    waits = waits_open(run_id=run.pk)
    for wait in waits:
        wait_close(ref=wait.ref, status=WaitStatus.CANCELLED)
    return len(waits)

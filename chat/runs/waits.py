"""The runs' side of waiting (chat.core.waits): the reaper expires overdue waits through
their kind, and Stop ends a run's waits, however its turn stands. Each card kind says how
its own end (`Kind.on_expire`, `Kind.on_stop`, questionnaires.registry); a call in the MCP
session host is the MCP host's."""

from __future__ import annotations

import logging

from chat.core.models import MCP_CALL_WAIT, Run, Wait, WaitStatus
from chat.core.waits import wait_close, waits_due, waits_open
from chat.mcphost import hosted
from chat.mcphost.records import McpCall
from chat.runs.external import runs_external_idle
from questionnaires import registry

logger = logging.getLogger(__name__)


def _expire(wait: Wait) -> None:
    """Close one overdue wait the way its kind ends (an elicitation card expires: the
    server gets `cancel`; other cards simply stop counting as waiting), and a call the
    session host never finished is interrupted."""
    if wait.kind == MCP_CALL_WAIT:
        _kind, _, ref_id = wait.ref.partition(":")
        call = McpCall.objects.filter(pk=int(ref_id)).first() if ref_id.isdigit() else None
        if call is not None:
            hosted.call_interrupt(call, call.host)
    else:
        registry.wait_expire(wait)
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
    """Stop: the run's cards lock (each kind's `on_stop`: the servers get `cancel`) and its
    other waits end, so a suspended run is queued again and its next attempt ends it as
    cancelled."""
    registry.run_stop(run)
    waits = waits_open(run_id=run.pk)
    for wait in waits:
        wait_close(ref=wait.ref, status=WaitStatus.CANCELLED)
    return len(waits)

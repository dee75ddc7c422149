"""The session host's database side (synchronous; the host runs these on its few ORM
threads): its lease, taking calls handed to it, storing their results, and ending the
calls of a host that died.

The row is the source of truth: a worker hands a call over by marking it `hosted`
(chat.mcphost.calling); a host takes it by writing its lease id into `McpCall.host`
(a conditional UPDATE: of several hosts, one wins); the result is stored with the call's
wait closed in one transaction, which queues the suspended run again. A host whose lease
is older than MCP_HOST_LEASE_SECONDS is dead: its calls end as interrupted — the cards
say so, the model gets `MCP_HOST_INTERRUPTED` — and the runs resume.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import override

from chat.core.models import Conversation, WaitStatus
from chat.core.waits import wait_close
from chat.mcphost import elicit, health
from chat.mcphost.records import McpCall, McpCallState, McpHostLease, host_wait_ref
from chat.mcphost.results import error_result

logger = logging.getLogger(__name__)

MCP_HOST_INTERRUPTED = "MCP_HOST_INTERRUPTED"
CLAIM_BATCH = 50


def host_alive() -> bool:
    """Does a session host hold a fresh lease?"""
    fresh = timezone.now() - timedelta(seconds=settings.MCP_HOST_LEASE_SECONDS)
    return McpHostLease.objects.filter(heartbeat_at__gt=fresh).exists()


def lease_take(host: str) -> None:
    """Start this host's lease, and end the calls of hosts that are gone."""
    McpHostLease.objects.update_or_create(
        host=host, defaults={"pid": os.getpid(), "heartbeat_at": timezone.now()}
    )
    calls_interrupt_stale()


def lease_beat(host: str) -> None:
    if not McpHostLease.objects.filter(host=host).update(heartbeat_at=timezone.now()):
        lease_take(host)


def lease_release(host: str) -> None:
    McpHostLease.objects.filter(host=host).delete()


def calls_claim(host: str) -> list[McpCall]:
    """Calls handed to a host and not taken yet, now this host's."""
    free = McpCall.objects.filter(state=McpCallState.HOSTED, host="")
    taken: list[int] = []
    for pk in free.order_by("id").values_list("pk", flat=True)[:CLAIM_BATCH]:
        mine = McpCall.objects.filter(pk=pk, state=McpCallState.HOSTED, host="")
        if mine.update(host=host, taken_at=timezone.now()):
            taken.append(pk)
    return list(McpCall.objects.filter(pk__in=taken).select_related("server").order_by("id"))


def call_finish(call: McpCall, host: str, result: dict[str, Any], *, outage: str = "") -> bool:
    """Store the call's result (if this host still holds it), lock what its cards still
    show, and close its wait: the suspended run is queued again. `outage`: the error code
    when the server failed (the breaker counts it)."""
    services = elicit.backend()
    with transaction.atomic():
        mine = McpCall.objects.filter(pk=call.pk, state=McpCallState.HOSTED, host=host)
        if not mine.update(state=McpCallState.DONE, result=result, updated_at=timezone.now()):
            return False
        if services is not None:
            services.elicitations_end(
                run_id=call.run_id, tool_call_id=call.tool_call_id, code="server_stopped_waiting"
            )
            services.elicitations_resolve_links(
                run_id=call.run_id,
                tool_call_id=call.tool_call_id,
                success=result.get("success") is True,
            )
        wait_close(ref=host_wait_ref(call.pk), status=WaitStatus.ANSWERED)
    if call.server_id is not None:
        if outage:
            health.record_failure(call.server_id, outage, str(result.get("message", "")))
        else:
            health.record_success(call.server_id)
    return True


def _interrupted(call: McpCall) -> dict[str, Any]:
    language = Conversation.objects.values_list("language", flat=True).get(pk=call.conversation_id)
    with override(language):
        message = _(
            "The request of %(server)s was interrupted: the chat's MCP session host stopped "
            "while the call was under way, so its outcome is unknown."
        ) % {"server": call.server_name}
    return error_result(MCP_HOST_INTERRUPTED, message, server=call.server_name, tool=call.tool)


def call_interrupt(call: McpCall, host: str) -> bool:
    """End a call its host can no longer finish (the host stopped or died) visibly."""
    services = elicit.backend()
    with transaction.atomic():
        mine = McpCall.objects.filter(pk=call.pk, state=McpCallState.HOSTED, host=host)
        if not mine.update(
            state=McpCallState.DONE, result=_interrupted(call), updated_at=timezone.now()
        ):
            return False
        if services is not None:
            services.elicitations_end(
                run_id=call.run_id, tool_call_id=call.tool_call_id, code="host_interrupted"
            )
        wait_close(ref=host_wait_ref(call.pk), status=WaitStatus.ENDED)
    logger.warning("MCP call %s (%s) interrupted: its session host is gone", call.pk, call)
    return True


def calls_interrupt_stale() -> list[int]:
    """End the calls held by hosts whose lease went stale, and those no host took within
    the lease time (no host runs). Called by every host at start and by the reaper."""
    cutoff = timezone.now() - timedelta(seconds=settings.MCP_HOST_LEASE_SECONDS)
    live = McpHostLease.objects.filter(heartbeat_at__gt=cutoff).values_list("host", flat=True)
    McpHostLease.objects.filter(heartbeat_at__lte=cutoff).delete()
    orphans = McpCall.objects.filter(state=McpCallState.HOSTED).filter(
        (~Q(host="") & ~Q(host__in=list(live))) | Q(host="", updated_at__lt=cutoff)
    )
    ended = []
    for call in orphans.order_by("id")[:500]:
        if call_interrupt(call, call.host):
            ended.append(call.pk)
    return ended

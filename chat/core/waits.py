"""Waiting for a person (or the MCP session host) — one record and one small service for
every way of asking (`Wait`, chat.core.models).

A kind opens a wait when it shows something answerable (`wait_open`, which enforces the
limits) and closes it when that thing is answered, expires or ends (`wait_close`). Two
ways a wait ends:

- the kinds whose answer is a new user message (inline cards, deferred forms, asks;
  spec 000/003/004; `Kind.answered_by_message`): the run that asked has ended;
  `answer_post` closes every open one of the conversation (`waits_close_answered`) in the
  transaction of the answer;
- the waits a suspended run is parked on (`resumes_run`: an MCP elicitation, a call in the
  MCP session host): once none of the run's resuming waits is open, the run is queued
  again (`run_resume_if_ready`) and the next attempt resumes from its last persisted step.

Every wait has an owner (the conversation's), a deadline (the reaper closes it as
expired through its kind, chat.runs.waits) and an end the person sees (the kind's card).
"""

from __future__ import annotations

import functools
import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import (
    MCP_CALL_WAIT,
    Conversation,
    Message,
    Run,
    RunStatus,
    Wait,
    WaitStatus,
)
from chat.core.runs import run_start
from chat.obs import metrics, tracing

logger = logging.getLogger(__name__)


class WaitLimited(ChatError):
    """Opening one more wait would pass a limit: a stable code and a human message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message, status=429)


def wait_limit_problem(
    *, conversation: Conversation, run: Run | None, tool_call_id: str = ""
) -> WaitLimited | None:
    """The limit a new person-wait would pass, or None. Checked in the caller's
    transaction, after `waits_lock` (so twenty concurrent opens can't all slip under)."""
    person = Wait.objects.filter(status=WaitStatus.OPEN).exclude(kind=MCP_CALL_WAIT)
    limit = settings.WAITS_PER_USER
    if person.filter(owner_id=conversation.owner_id).count() >= limit:
        return WaitLimited(
            "wait_limit_user",
            _(
                "You have %(n)s questions waiting for your answer in your conversations; "
                "answer or dismiss some of them first."
            )
            % {"n": limit},
        )
    limit = settings.WAITS_PER_CONVERSATION
    if person.filter(conversation_id=conversation.pk).count() >= limit:
        return WaitLimited(
            "wait_limit_conversation",
            _("%(n)s questions already wait for your answer in this conversation.") % {"n": limit},
        )
    if run is None:
        return None
    asked = Wait.objects.filter(run_id=run.pk).exclude(kind=MCP_CALL_WAIT)
    limit = settings.WAITS_PER_TOOL_CALL
    if tool_call_id and asked.filter(tool_call_id=tool_call_id).count() >= limit:
        return WaitLimited(
            "wait_limit_call",
            _("One tool call may ask at most %(n)s questions; this one asked more.") % {"n": limit},
        )
    limit = settings.WAITS_PER_TURN
    if asked.count() >= limit:
        return WaitLimited(
            "wait_limit_turn",
            _("One answer of the assistant may ask at most %(n)s questions.") % {"n": limit},
        )
    return None


def waits_lock(conversation: Conversation) -> None:
    """Serialize opening waits per person (the per-user limit counts across their
    conversations). Lock order, everywhere: the conversation, then its owner, then a run
    (event_emit and message_create lock the conversation first too)."""
    locked = Conversation.objects.select_for_update().filter(pk=conversation.pk)
    list(locked.order_by().values_list("pk"))
    owner = get_user_model().objects.select_for_update().filter(pk=conversation.owner_id)
    list(owner.order_by().values_list("pk"))


def wait_open(
    *,
    conversation: Conversation,
    kind: str,
    ref: str,
    seconds: float,
    run: Run | None = None,
    tool_call_id: str = "",
    resumes_run: bool = False,
    check_limits: bool = True,
) -> Wait:
    """Record that `run` (or the conversation) now waits on the kind's row `ref` until
    `seconds` from now. Person-waits are refused past a limit (`WaitLimited`); an MCP call
    handed to the session host is never refused (it was already made)."""
    with transaction.atomic():
        if check_limits and kind != MCP_CALL_WAIT:
            waits_lock(conversation)
            problem = wait_limit_problem(
                conversation=conversation, run=run, tool_call_id=tool_call_id
            )
            if problem is not None:
                raise problem
        wait, created = Wait.objects.get_or_create(
            ref=ref[:80],
            defaults={
                "conversation_id": conversation.pk,
                "owner_id": conversation.owner_id,
                "run_id": run.pk if run is not None else None,
                "kind": kind,
                "tool_call_id": tool_call_id[:200],
                "resumes_run": resumes_run,
                "deadline": timezone.now() + timedelta(seconds=seconds),
                "trace_context": tracing.carrier(),
            },
        )
        if created and kind != MCP_CALL_WAIT:
            transaction.on_commit(functools.partial(_opened, wait.pk))
    return wait


def _opened(wait_id: int) -> None:
    """A question now waits for a person: tell whoever listens (settings.WAIT_OPENED_HOOKS,
    the inbox's notifications). A listener's failure never fails the ask."""
    for path in settings.WAIT_OPENED_HOOKS:
        try:
            import_string(path)(wait_id=wait_id)
        except Exception:
            logger.exception("wait %s: %s failed", wait_id, path)


def wait_close(*, ref: str, status: str = WaitStatus.ANSWERED) -> Wait | None:
    """Close the open wait `ref` (answered, expired, cancelled, ended); its suspended run
    is queued again when nothing else holds it. None when it wasn't open."""
    with transaction.atomic():
        found = Wait.objects.filter(ref=ref).values_list("conversation_id", flat=True).first()
        if found is None:
            return None
        _lock_conversation(found)
        wait = Wait.objects.select_for_update().filter(ref=ref, status=WaitStatus.OPEN).first()
        if wait is None:
            return None
        Wait.objects.filter(pk=wait.pk).update(status=status, closed_at=timezone.now())
        wait.status = status
        _closed(wait.kind, status, wait.created_at, wait.trace_context)
        if wait.resumes_run and wait.run_id is not None:
            run_resume_if_ready(run_id=wait.run_id)
    return wait


def waits_close_answered(*, conversation: Conversation, message: Message | None = None) -> int:
    """The person answered (a new user message `message`): every open wait of the
    conversation whose answer is a new message is over — which ones, their kinds say
    (`settings.WAITS_ANSWERED`, a dotted path like `RUN_STARTER`: the kind registry, a
    layer above; e.g. the other asks of an ask's turn stay open, asked one at a time)."""
    open_ = Wait.objects.filter(conversation_id=conversation.pk, status=WaitStatus.OPEN)
    answered = import_string(settings.WAITS_ANSWERED)
    waiting: QuerySet[Wait] = answered(open_, conversation=conversation, message=message)
    if tracing.enabled():  # each wait's span, from when it opened (one query more)
        for kind, created, parent in waiting.values_list("kind", "created_at", "trace_context"):
            _closed(kind, WaitStatus.ANSWERED, created, parent)
    return waiting.update(status=WaitStatus.ANSWERED, closed_at=timezone.now())


def _closed(kind: str, status: str, opened: datetime, traceparent: str) -> None:
    """A wait ended: its span (under the one that opened it) and, for an expiry, the
    count of questions nobody answered in time."""
    if status == WaitStatus.EXPIRED:
        metrics.on_commit(lambda: metrics.ANSWERS.labels(kind, "expired").inc())
    tracing.span_record(
        "chat.wait",
        started=opened,
        traceparent=traceparent,
        attributes={"chat.wait.kind": kind, "chat.wait.outcome": status},
        error=status == WaitStatus.EXPIRED,
    )


def waits_open(*, run_id: int | None = None, conversation_id: int | None = None) -> list[Wait]:
    waits = Wait.objects.filter(status=WaitStatus.OPEN)
    if run_id is not None:
        waits = waits.filter(run_id=run_id)
    if conversation_id is not None:
        waits = waits.filter(conversation_id=conversation_id)
    return list(waits.order_by("id"))


def waits_due(*, limit: int = 500) -> list[Wait]:
    """Open waits past their deadline (the reaper closes them through their kind)."""
    due = Wait.objects.filter(status=WaitStatus.OPEN, deadline__lte=timezone.now())
    return list(due.order_by("deadline")[:limit])


def _lock_conversation(conversation_id: int) -> None:
    locked = Conversation.objects.select_for_update().filter(pk=conversation_id)
    list(locked.order_by().values_list("pk"))


def run_waits_lock(run: Run) -> None:
    """Serialize a run's suspension with the closing of its waits: both lock the
    conversation's row first (as event_emit and message_create do), so an answer that
    arrives while the worker suspends the run is seen by one side or the other."""
    _lock_conversation(run.conversation_id)


def run_resume_if_ready(*, run_id: int) -> bool:
    """Queue a suspended run again when none of its resuming waits is open; it is started
    after the commit. False when it isn't suspended or still waits."""
    with transaction.atomic():
        found = Run.objects.filter(pk=run_id).values_list("conversation_id", flat=True).first()
        if found is None:
            return False
        _lock_conversation(found)
        # (No row lock on a run that isn't suspended: its turn may hold it, and would wait
        # for the conversation's row this transaction holds.)
        if Wait.objects.filter(run_id=run_id, status=WaitStatus.OPEN, resumes_run=True).exists():
            return False
        # heartbeat_at: when it was queued again (the reaper's queue timeout counts
        # from then), as for a run queued again after a dead worker.
        queued = Run.objects.filter(pk=run_id, status=RunStatus.SUSPENDED).update(
            status=RunStatus.QUEUED, heartbeat_at=timezone.now(), dispatched_at=None, worker=""
        )
        if not queued:
            return False
        run_start(run_id=run_id, again=True)
    return True

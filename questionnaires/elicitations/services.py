"""MCP elicitations: open one (a card in the chat and its `Wait`), take the answer from
the page, and close it (expired, cancelled, completed, abandoned).

The MCP host opens cards (`elicitation_open`: for a 2026-07-28 server's input requests,
whose answers re-issue the call in the run's next attempt; for a 2025-11-25 server's
`elicitation/create` in the session host) and reads the outcome (`outcome_of`); the page
calls `elicitation_answer`. Nothing here talks MCP: the caller turns an
`ElicitationOutcome` into the `ElicitResult` and an `ElicitationRefused` into JSON-RPC
error -32602.

An answer is not a chat message and starts no run: it closes the card's wait
(chat.core.waits), which queues the suspended run again once nothing else holds it.
Every state change emits `card_locked` (`elicitation_id`, `status`) so open tabs fetch
the card again, locked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, timedelta, tzinfo
from typing import cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation, Role, Run, Wait, WaitStatus
from chat.core.services import event_emit, message_create
from chat.core.waits import wait_close, wait_limit_problem, waits_lock
from chat.obs import metrics
from questionnaires.drafts import draft_clear
from questionnaires.elicitations.links import MAX_URL, link_of
from questionnaires.elicitations.models import (
    KIND_NAME,
    Elicitation,
    ElicitationMode,
    ElicitationStatus,
)
from questionnaires.elicitations.presenter import card_key
from questionnaires.elicitations.refusals import refusal_of
from questionnaires.elicitations.selectors import fields_of
from questionnaires.protocol.elicitation_form import form_read, validate_content
from questionnaires.protocol.jsontypes import Json
from questionnaires.protocol.provenance import PROVENANCE_META_KEY, field_provenance
from questionnaires.registry import wait_open

ACTIONS = ("accept", "decline", "cancel")
MAX_PROMPT = 10_000
Status = ElicitationStatus


@dataclass(frozen=True)
class ElicitationOutcome:
    action: str  # "accept" | "decline" | "cancel"
    content: dict[str, Json] | None  # validated content for accept in form mode, else None
    # Issue 27: each field's provenance (chosen | default | free_text | skipped), sent in
    # the result's `_meta` under PROVENANCE_META_KEY; empty unless accepted in form mode.
    provenance: dict[str, str] = field(default_factory=dict)

    @property
    def meta(self) -> dict[str, Json] | None:
        return {PROVENANCE_META_KEY: dict(self.provenance)} if self.provenance else None


def content_provenance(elicitation: Elicitation, content: Mapping[str, Json]) -> dict[str, str]:
    """The provenance of every field of an accepted form (see `protocol.provenance`)."""
    return {
        spec.name: field_provenance(
            default=spec.default,
            value=content.get(spec.name),
            present=spec.name in content,
            typed=spec.kind in ("string", "number", "integer"),
        )
        for spec in fields_of(elicitation)
    }


class ElicitationRefused(ChatError):
    """A request the chat won't show (schema outside the subset, a secret field, a bad
    URL). Raised after the refusal is visible in the chat; `elicitation` is its card."""

    def __init__(self, code: str, message: str, *, elicitation: Elicitation | None = None):
        super().__init__(code, message, status=400)
        self.elicitation = elicitation


# How a card's state ends its wait.
WAIT_STATUS = {
    ElicitationStatus.ACCEPTED: WaitStatus.ANSWERED,
    ElicitationStatus.DECLINED: WaitStatus.ANSWERED,
    ElicitationStatus.COMPLETED: WaitStatus.ANSWERED,
    ElicitationStatus.CANCELLED: WaitStatus.CANCELLED,
    ElicitationStatus.EXPIRED: WaitStatus.EXPIRED,
    ElicitationStatus.ABANDONED: WaitStatus.ENDED,
}


def wait_ref(elicitation_id: int) -> str:
    """The card's `Wait.ref`."""
    return f"elicitation:{elicitation_id}"


# --- opening ---------------------------------------------------------------------------


def elicitation_open(
    *,
    conversation_id: int,
    run_id: int | None,
    server_name: str,
    tool_name: str,
    tool_call_id: str,
    mode: str,
    message: str,
    requested_schema: Mapping[str, object] | None = None,
    url: str | None = None,
    remote_id: str | None = None,
    input_key: str = "",
    resumes_run: bool = False,
    session_ref: str = "",
) -> Elicitation:
    """Show an MCP server's request for input as a card and store it, pending, with its
    wait (`resumes_run`: the run is suspended on it; its answer queues the run again).

    A request the chat won't show still gets a card — locked, saying why — and then
    raises `ElicitationRefused` (`elicitation_schema_unsupported`,
    `elicitation_secret_field`, `elicitation_url_invalid`, `elicitation_mode_unsupported`,
    or a limit: `wait_limit_user`, `wait_limit_conversation`, `wait_limit_call`,
    `wait_limit_turn` — shown once per tool call, later ones are refused without a card).
    """
    conversation = Conversation.objects.get(pk=conversation_id)
    run = Run.objects.filter(pk=run_id).first() if run_id is not None else None
    server = str(server_name or "MCP")[:200]
    call_id = str(tool_call_id or "")[:200]
    link = link_of(str(url or "")) if mode == ElicitationMode.URL else None
    with translation.override(conversation.language):
        refusal = refusal_of(server, mode, requested_schema, url, message)
        intro = _("“%(server)s” asks for input.") % {"server": server}
    with transaction.atomic():
        waits_lock(conversation)
        refusal = refusal or _over_limit(conversation, run, call_id)
        card_message = message_create(
            conversation=conversation,
            role=Role.ASSISTANT,
            content=intro,
            metadata={"kind": "elicitation", "elicitation": {"server": server, "mode": mode}},
            run=run,
        )
        row = Elicitation.objects.create(
            conversation=conversation,
            run_id=run_id,
            message=card_message,
            server_name=server,
            tool_name=str(tool_name or "")[:200],
            tool_call_id=call_id,
            mode=mode if mode in ElicitationMode.values else ElicitationMode.FORM,
            prompt=str(message or "")[:MAX_PROMPT],
            requested_schema=requested_schema if isinstance(requested_schema, dict) else None,
            url=(link.href if link and link.openable else str(url or ""))[:MAX_URL],
            remote_id=str(remote_id or "")[:200],
            input_key=str(input_key or "")[:200],
            session_ref=str(session_ref or "")[:64],
            status=Status.REFUSED if refusal else Status.PENDING,
            refused_code=refusal[0] if refusal else "",
            refused_reason=refusal[1] if refusal else "",
            expires_at=timezone.now() + timedelta(seconds=settings.MCP_ELICITATION_TIMEOUT),
        )
        if not refusal:
            _wait_open(row, run, resumes_run)
    if refusal:
        raise ElicitationRefused(refusal[0], refusal[1], elicitation=row)
    return row


def _over_limit(
    conversation: Conversation, run: Run | None, call_id: str
) -> tuple[str, str] | None:
    """The limit a new card would pass, as a refusal (code, reason); raised without a card
    when this call was already shown one."""
    limited = wait_limit_problem(conversation=conversation, run=run, tool_call_id=call_id)
    if limited is None:
        return None
    if _limit_shown(conversation.pk, run.pk if run else None, call_id):
        raise ElicitationRefused(limited.code, limited.message)
    return (limited.code, limited.message)


def _wait_open(row: Elicitation, run: Run | None, resumes_run: bool) -> None:
    wait_open(
        conversation=row.conversation,
        kind=KIND_NAME,
        ref=wait_ref(row.pk),
        seconds=settings.MCP_ELICITATION_TIMEOUT,
        run=run,
        tool_call_id=row.tool_call_id,
        resumes_run=resumes_run,
        check_limits=False,  # checked with the card, in its transaction
    )


def _limit_shown(conversation_id: int, run_id: int | None, call_id: str) -> bool:
    """A limit's refusal card is shown once per tool call (a server that keeps asking
    gets errors, not a wall of cards)."""
    same_run = Q(run__isnull=True) if run_id is None else Q(run_id=run_id)
    return Elicitation.objects.filter(
        same_run,
        conversation_id=conversation_id,
        tool_call_id=call_id,
        status=Status.REFUSED,
        refused_code__startswith="wait_limit_",
    ).exists()


# --- answering -------------------------------------------------------------------------


def elicitation_answer(
    *,
    elicitation: Elicitation,
    action: object,
    data: Mapping[str, Sequence[str]],
    user: User,
    zone: tzinfo = UTC,
    typed: Mapping[str, object] | None = None,
) -> Elicitation:
    """Record the person's answer: `accept` (form mode: `data` holds `answer-<field>`
    values, validated against the schema; or `typed`, the content as JSON from a machine
    client, checked as it is), `decline` or `cancel`. Exactly once.

    Refusals: 400 `elicitation_action_invalid`; 400 `elicitation_answer_invalid` with
    `details.fields` (field → message) and `details.values` (what was typed); 409
    `elicitation_expired` or `elicitation_not_pending` (already answered elsewhere).
    """
    if action not in ACTIONS:
        raise ChatError("elicitation_action_invalid", _("Choose Submit, Decline or Cancel."))
    _refuse_if_closed(elicitation)
    url_mode = elicitation.mode == ElicitationMode.URL
    if url_mode and action == "accept" and not link_of(elicitation.url).openable:
        raise ChatError(
            "elicitation_url_invalid", _("This link can't be opened safely."), status=409
        )
    content = None
    if action == "accept" and elicitation.mode == ElicitationMode.FORM:
        content = _content(elicitation, data, zone, typed)
    status = {"accept": Status.ACCEPTED, "decline": Status.DECLINED, "cancel": Status.CANCELLED}
    if action == "accept" and _nobody_waits(elicitation):
        # A link shown for -32042: its call has returned and no session will say "done".
        status["accept"] = Status.COMPLETED
    with transaction.atomic():
        done = Elicitation.objects.filter(
            pk=elicitation.pk, status=Status.PENDING, expires_at__gt=timezone.now()
        ).update(
            status=status[action], content=content, answered_by=user, answered_at=timezone.now()
        )
        if done != 1:
            elicitation.refresh_from_db()
            _refuse_if_closed(elicitation)
            raise AssertionError("unreachable: a pending elicitation that can't be answered")
        draft_clear(conversation=elicitation.conversation, card=card_key(elicitation.pk))
        _locked(elicitation, status[action])
        wait_close(ref=wait_ref(elicitation.pk), status=WAIT_STATUS[status[action]])
        outcome = {"accept": "answered", "decline": "declined", "cancel": "cancelled"}[action]
        metrics.on_commit(lambda: metrics.ANSWERS.labels("elicitation", outcome).inc())
    elicitation.refresh_from_db()
    return elicitation


def _content(
    elicitation: Elicitation,
    data: Mapping[str, Sequence[str]],
    zone: tzinfo,
    typed: Mapping[str, object] | None,
) -> dict[str, Json]:
    """An accepted form's content, or 400 `elicitation_answer_invalid` with every
    field's problem (and, from a posted card, what was typed)."""
    fields = fields_of(elicitation)
    lang = translation.get_language() or "en"
    if typed is not None:
        errors = validate_content(fields, typed)
        if not errors:
            return {name: cast(Json, value) for name, value in typed.items()}
        details: dict[str, Json] = {}
    else:
        read = form_read(fields, data, zone=zone)
        if read.ok:
            return cast(dict[str, Json], read.content)
        errors, details = read.errors, {"values": cast(Json, read.values)}
    fields_wrong: dict[str, Json] = {name: e.message(lang) for name, e in errors.items()}
    raise ChatError(
        "elicitation_answer_invalid",
        _("Some answers need attention."),
        details={"fields": fields_wrong, **details},
    )


def elicitation_expire(*, elicitation: Elicitation) -> bool:
    """Close a card past its time as expired (its server hears `cancel`), as the waiting
    side would on its next look; False when it was no longer pending."""
    if elicitation.expires_at > timezone.now():
        return False
    return _close(elicitation.pk, Status.EXPIRED)


def _nobody_waits(elicitation: Elicitation) -> bool:
    return (
        elicitation.mode == ElicitationMode.URL
        and not elicitation.input_key
        and not elicitation.session_ref
    )


def _refuse_if_closed(elicitation: Elicitation) -> None:
    if elicitation.status == Status.PENDING and elicitation.expires_at <= timezone.now():
        _close(elicitation.pk, Status.EXPIRED)
        elicitation.refresh_from_db()
    if elicitation.status == Status.EXPIRED:
        raise ChatError("elicitation_expired", _("This request for input has expired."), status=409)
    if elicitation.status != Status.PENDING:
        raise ChatError(
            "elicitation_not_pending",
            _("This request for input was already answered."),
            status=409,
        )


def _locked(elicitation: Elicitation, status: str) -> None:
    event_emit(
        conversation_id=elicitation.conversation_id,
        name="card_locked",
        data={"elicitation_id": elicitation.pk, "status": status},
    )


def _close(
    pk: int, status: str, *, code: str = "", reason: str = "", also: tuple[str, ...] = ()
) -> bool:
    """Move a pending (or `also` one of these) elicitation to `status`; False if it
    wasn't in such a state any more."""
    with transaction.atomic():
        row = Elicitation.objects.filter(pk=pk).only("conversation_id").first()
        changed = Elicitation.objects.filter(pk=pk, status__in=(Status.PENDING, *also)).update(
            status=status, refused_code=code, refused_reason=reason
        )
        if changed and row is not None:
            _locked(row, status)
            wait_close(
                ref=wait_ref(pk),
                status=WAIT_STATUS.get(ElicitationStatus(status), WaitStatus.ENDED),
            )
    return bool(changed)


# --- the waiting side ------------------------------------------------------------------


def outcome_of(elicitation: Elicitation) -> ElicitationOutcome:
    content = elicitation.content if elicitation.action == "accept" else None
    provenance = content_provenance(elicitation, content) if isinstance(content, dict) else {}
    return ElicitationOutcome(action=elicitation.action, content=content, provenance=provenance)


def elicitations_settled(ids: Iterable[int]) -> dict[int, ElicitationOutcome]:
    """The answers of those cards that are no longer pending (expiring the ones past their
    time first): what the session host hands back to its servers. One indexed query that
    returns only what changed, however many cards wait."""
    found: dict[int, ElicitationOutcome] = {}
    changed = Elicitation.objects.filter(pk__in=list(ids)).filter(
        ~Q(status=Status.PENDING) | Q(expires_at__lte=timezone.now())
    )
    for row in changed:
        if row.status == Status.PENDING:  # past its time
            if _close(row.pk, Status.EXPIRED):
                found[row.pk] = ElicitationOutcome(action="cancel", content=None)
                continue
            row.refresh_from_db()
        found[row.pk] = outcome_of(row)
    return found


def elicitations_expire_due(*, ids: Iterable[int]) -> int:
    """The reaper: these cards' waits are past their deadline — expire them (the server
    gets `cancel`; a suspended run waiting on them is queued again)."""
    expired = 0
    for pk in ids:
        expired += _close(pk, Status.EXPIRED)
    return expired


def _end_reason(code: str, server: str) -> str:
    """What a card that ended without an answer says (in the conversation's language)."""
    if code == "server_stopped_waiting":
        return _("%(server)s stopped waiting for your answer.") % {"server": server}
    if code == "host_interrupted":
        return _(
            "The request of %(server)s was interrupted: the chat's MCP session host "
            "stopped. The assistant was told."
        ) % {"server": server}
    return _("The request of %(server)s ended.") % {"server": server}


def elicitations_end(*, run_id: int, tool_call_id: str | None = None, code: str) -> int:
    """A run was stopped (`run_cancelled`), or a call ended while a card waited
    (`server_stopped_waiting`: pending cards only — its opened links are resolved with
    its result; `host_interrupted`): the cards lock and say so. Returns how many.

    A link shown for -32042 is not a question the call waits on (the call has returned
    with it: the person opens it, then the model calls again): only Stop ends it."""
    states = (
        (Status.PENDING,) if code == "server_stopped_waiting" else (Status.PENDING, Status.ACCEPTED)
    )
    cards = Elicitation.objects.filter(run_id=run_id, status__in=states)
    if code != "run_cancelled":
        cards = cards.exclude(mode=ElicitationMode.URL, input_key="", session_ref="")
    rows = cards.values_list("pk", "status", "mode")
    if not rows.exists():
        return 0
    if tool_call_id is not None:
        rows = rows.filter(tool_call_id=str(tool_call_id)[:200])
    ended = 0
    conversation = Run.objects.select_related("conversation").get(pk=run_id).conversation
    for pk, status, mode in rows:
        if status == Status.ACCEPTED and mode != ElicitationMode.URL:
            continue  # an answered form: nothing more to say
        if code == "run_cancelled" and status == Status.PENDING:
            ended += _close(pk, Status.CANCELLED, code=code)
            continue
        server = Elicitation.objects.values_list("server_name", flat=True).get(pk=pk)
        with translation.override(conversation.language):
            reason = _end_reason(code, server)
        ended += _close(pk, Status.ABANDONED, code=code, reason=reason, also=(Status.ACCEPTED,))
    return ended


def elicitations_resolve_links(*, run_id: int, tool_call_id: str, success: bool) -> None:
    """The call that opened URL cards returned: an opened link whose completion notice
    never came is done (the tool succeeded) or ended with the call."""
    rows = Elicitation.objects.filter(
        run_id=run_id,
        tool_call_id=str(tool_call_id)[:200],
        mode=ElicitationMode.URL,
        status=Status.ACCEPTED,
    ).values_list("pk", flat=True)
    for pk in rows:
        if success:
            _close(pk, Status.COMPLETED, also=(Status.ACCEPTED,))
        else:
            row = Elicitation.objects.select_related("conversation").get(pk=pk)
            with translation.override(row.conversation.language):
                reason = _("The tool call ended before “%(server)s” confirmed the step.") % {
                    "server": row.server_name
                }
            _close(pk, Status.ABANDONED, code="call_ended", reason=reason, also=(Status.ACCEPTED,))


def elicitation_complete(*, conversation_id: int, remote_id: str, session_ref: str) -> bool:
    """URL mode: the server's `notifications/elicitation/complete`. The accepted card of
    that `elicitationId`, opened by the same server session, says "completed"; False when
    there is none (unknown id, another server's or session's, not accepted, done)."""
    rows = Elicitation.objects.filter(
        conversation_id=conversation_id,
        session_ref=str(session_ref)[:64],
        remote_id=str(remote_id)[:200],
        mode=ElicitationMode.URL,
        status=Status.ACCEPTED,
    ).values_list("pk", flat=True)
    closed = [_close(pk, Status.COMPLETED, also=(Status.ACCEPTED,)) for pk in rows]  # all
    return any(closed)


def elicitation_wait_expire(wait: Wait) -> None:
    """The reaper's hook (Kind.on_expire): the card of an overdue wait expires (the server
    gets `cancel`; a suspended run waiting on it is queued again)."""
    _kind, _sep, ref_id = wait.ref.partition(":")
    if ref_id.isdigit():
        elicitations_expire_due(ids=[int(ref_id)])


def elicitations_stop(run: Run) -> None:
    """Stop's hook (Kind.on_stop): the run's cards lock (the servers get `cancel`)."""
    elicitations_end(run_id=run.pk, code="run_cancelled")

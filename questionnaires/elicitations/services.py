"""MCP elicitations: open one (a card in the chat), wait for its one answer, take the
answer from the page, and close it (expired, cancelled, completed, abandoned).

The MCP client (a worker thread inside a tool call) calls `elicitation_open`, then
`elicitation_wait`; the page calls `elicitation_answer`. Nothing here talks MCP: the
caller turns an `ElicitationOutcome` into the `ElicitResult` and an `ElicitationRefused`
into JSON-RPC error -32602.

An answer is not a chat message and starts no run: the tool call that asked is still
running and receives it. Every state change emits `card_locked` (`elicitation_id`,
`status`) so open tabs fetch the card again, locked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation, Role, Run
from chat.core.services import event_emit, message_create
from questionnaires.drafts import draft_clear
from questionnaires.elicitations.links import MAX_URL, url_is_openable
from questionnaires.elicitations.models import Elicitation, ElicitationMode, ElicitationStatus
from questionnaires.elicitations.presenter import card_key
from questionnaires.elicitations.selectors import fields_of
from questionnaires.protocol.elicitation_form import form_read
from questionnaires.protocol.elicitation_schema import schema_check
from questionnaires.protocol.jsontypes import Json

ACTIONS = ("accept", "decline", "cancel")
MAX_PROMPT = 10_000
Status = ElicitationStatus


@dataclass(frozen=True)
class ElicitationOutcome:
    action: str  # "accept" | "decline" | "cancel"
    content: dict[str, Json] | None  # validated content for accept in form mode, else None


class ElicitationRefused(ChatError):
    """A request the chat won't show (schema outside the subset, a secret field, a bad
    URL). Raised after the refusal is visible in the chat; `elicitation` is its card."""

    def __init__(self, code: str, message: str, *, elicitation: Elicitation | None = None):
        super().__init__(code, message, status=400)
        self.elicitation = elicitation


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
) -> Elicitation:
    """Show an MCP server's request for input as a card and store it, pending.

    A request the chat won't show still gets a card — locked, saying why — and then
    raises `ElicitationRefused` (`elicitation_schema_unsupported`,
    `elicitation_secret_field`, `elicitation_url_invalid`, `elicitation_mode_unsupported`).
    """
    conversation = Conversation.objects.get(pk=conversation_id)
    server = str(server_name or "MCP")[:200]
    with translation.override(conversation.language):
        refusal = _refusal(server, mode, requested_schema, url)
        intro = _("“%(server)s” asks for input.") % {"server": server}
    with transaction.atomic():
        card_message = message_create(
            conversation=conversation,
            role=Role.ASSISTANT,
            content=intro,
            metadata={"kind": "elicitation", "elicitation": {"server": server, "mode": mode}},
            run=Run.objects.filter(pk=run_id).first() if run_id is not None else None,
        )
        row = Elicitation.objects.create(
            conversation=conversation,
            run_id=run_id,
            message=card_message,
            server_name=server,
            tool_name=str(tool_name or "")[:200],
            tool_call_id=str(tool_call_id or "")[:200],
            mode=mode if mode in ElicitationMode.values else ElicitationMode.FORM,
            prompt=str(message or "")[:MAX_PROMPT],
            requested_schema=requested_schema if isinstance(requested_schema, dict) else None,
            url=str(url or "")[:MAX_URL],
            remote_id=str(remote_id or "")[:200],
            status=Status.REFUSED if refusal else Status.PENDING,
            refused_code=refusal[0] if refusal else "",
            refused_reason=refusal[1] if refusal else "",
            expires_at=timezone.now() + timedelta(seconds=settings.MCP_ELICITATION_TIMEOUT),
        )
    if refusal:
        raise ElicitationRefused(refusal[0], refusal[1], elicitation=row)
    return row


def _refusal(server: str, mode: str, schema: object, url: str | None) -> tuple[str, str] | None:
    """(code, human reason) when the request can't be shown, else None."""
    if mode == ElicitationMode.URL:
        if url_is_openable(str(url or "")):
            return None
        return "elicitation_url_invalid", _(
            "“%(server)s” sent a link that can't be opened safely (only http and https "
            "links are); nothing was opened."
        ) % {"server": server}
    if mode != ElicitationMode.FORM:
        return "elicitation_mode_unsupported", _(
            "“%(server)s” asked for input in a way this chat doesn't support."
        ) % {"server": server}
    check = schema_check(schema)
    if check.ok:
        return None
    names = ", ".join(sorted({p.path for p in check.problems if p.path})) or "—"
    if check.secret:
        secret = ", ".join(sorted({p.path for p in check.problems if p.code == "secret_field"}))
        return "elicitation_secret_field", _(
            "“%(server)s” asked for a password, token or other secret (%(fields)s). "
            "Secrets are never asked for in the chat; nothing was sent."
        ) % {"server": server, "fields": secret}
    return "elicitation_schema_unsupported", _(
        "“%(server)s” asked for input this chat can't show (%(fields)s); nothing was sent."
    ) % {"server": server, "fields": names}


# --- answering -------------------------------------------------------------------------


def elicitation_answer(
    *,
    elicitation: Elicitation,
    action: object,
    data: Mapping[str, Sequence[str]],
    user: User,
    utc_offset: str = "Z",
) -> Elicitation:
    """Record the person's answer: `accept` (form mode: `data` holds `answer-<field>`
    values, validated against the schema), `decline` or `cancel`. Exactly once.

    Refusals: 400 `elicitation_action_invalid`; 400 `elicitation_answer_invalid` with
    `details.fields` (field → message) and `details.values` (what was typed); 409
    `elicitation_expired` or `elicitation_not_pending` (already answered elsewhere).
    """
    if action not in ACTIONS:
        raise ChatError("elicitation_action_invalid", _("Choose Submit, Decline or Cancel."))
    _refuse_if_closed(elicitation)
    content = None
    if action == "accept" and elicitation.mode == ElicitationMode.FORM:
        read = form_read(fields_of(elicitation), data, utc_offset=utc_offset)
        if not read.ok:
            lang = translation.get_language() or "en"
            raise ChatError(
                "elicitation_answer_invalid",
                _("Some answers need attention."),
                details={
                    "fields": {name: e.message(lang) for name, e in read.errors.items()},
                    "values": read.values,
                },
            )
        content = read.content
    status = {"accept": Status.ACCEPTED, "decline": Status.DECLINED, "cancel": Status.CANCELLED}
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
    elicitation.refresh_from_db()
    return elicitation


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
    return bool(changed)


# --- the waiting side ------------------------------------------------------------------


def outcome_of(elicitation: Elicitation) -> ElicitationOutcome:
    content = elicitation.content if elicitation.action == "accept" else None
    return ElicitationOutcome(action=elicitation.action, content=content)


def elicitation_wait(
    elicitation_id: int,
    *,
    timeout: float | None = None,
    poll: float = 0.25,
    cancelled: Callable[[], bool] = lambda: False,
) -> ElicitationOutcome:
    """Block until the person answers and return the answer. At `expires_at` or after
    `timeout` seconds it expires; when `cancelled()` turns true (the run was stopped) it
    is cancelled; either way the card says so and the outcome is `cancel`."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        row = Elicitation.objects.get(pk=elicitation_id)
        if row.status != Status.PENDING:
            return outcome_of(row)
        if row.expires_at <= timezone.now() or (
            deadline is not None and time.monotonic() >= deadline
        ):
            closed = _close(row.pk, Status.EXPIRED)
        elif cancelled():
            closed = _close(row.pk, Status.CANCELLED, code="run_cancelled")
        else:
            time.sleep(poll)
            continue
        if closed:
            return ElicitationOutcome(action="cancel", content=None)
        # else it was answered at that very moment: read the answer


def elicitation_complete(*, conversation_id: int, remote_id: str) -> bool:
    """URL mode: the server's `notifications/elicitation/complete`. The accepted card of
    that `elicitationId` says "completed"; False when there is none (unknown id, not
    accepted, already completed)."""
    rows = Elicitation.objects.filter(
        conversation_id=conversation_id,
        remote_id=str(remote_id)[:200],
        mode=ElicitationMode.URL,
        status=Status.ACCEPTED,
    ).values_list("pk", flat=True)
    closed = [_close(pk, Status.COMPLETED, also=(Status.ACCEPTED,)) for pk in rows]  # all
    return any(closed)


def elicitation_abandon(elicitation_id: int, reason: str) -> None:
    """The MCP call died while the card waited (or while an opened link was under way):
    the card says so and locks."""
    row = Elicitation.objects.filter(pk=elicitation_id).only("mode").first()
    if row is None:
        return
    _close(
        elicitation_id,
        Status.ABANDONED,
        code="elicitation_abandoned",
        reason=str(reason)[:1000],
        also=(Status.ACCEPTED,) if row.mode == ElicitationMode.URL else (),
    )

"""Reads for MCP elicitations."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation, Wait, WaitStatus
from questionnaires.elicitations.models import KIND_NAME, Elicitation, ElicitationStatus
from questionnaires.protocol.elicitation_schema import FieldSpec, schema_fields
from questionnaires.registry import Whereabouts


def elicitation_get(*, conversation: Conversation, elicitation_id: int | str) -> Elicitation:
    """The conversation's elicitation; 404 `elicitation_not_found` for any other id."""
    try:
        return Elicitation.objects.select_related("message").get(
            conversation=conversation, pk=int(elicitation_id)
        )
    except (Elicitation.DoesNotExist, ValueError, TypeError):
        raise ChatError(
            "elicitation_not_found", _("That request for input doesn't exist."), status=404
        ) from None


def elicitation_pending(*, conversation_id: int) -> Elicitation | None:
    """The elicitation a server truly waits on (pending, its wait open and not past its
    time), if any: only then is typing refused."""
    open_waits = Wait.objects.filter(
        conversation_id=conversation_id,
        kind=KIND_NAME,
        status=WaitStatus.OPEN,
        deadline__gt=timezone.now(),
    ).values_list("ref", flat=True)
    ids = [int(ref.partition(":")[2]) for ref in open_waits]
    if not ids:
        return None
    # (a link a server asked for with -32042 waits for nobody: its call has returned)
    someone_waits = ~Q(input_key="") | ~Q(session_ref="")
    return (
        Elicitation.objects.filter(
            pk__in=ids, status=ElicitationStatus.PENDING, expires_at__gt=timezone.now()
        )
        .filter(someone_waits)
        .order_by("id")
        .first()
    )


def elicitations_by_message(*, message_ids: Iterable[int]) -> dict[int, Elicitation]:
    """The elicitations attached to these messages, by message id (one query)."""
    ids = list(message_ids)
    if not ids:
        return {}
    rows = Elicitation.objects.filter(message_id__in=ids).select_related("run")
    return {row.message_id: row for row in rows}


def fields_of(elicitation: Elicitation) -> tuple[FieldSpec, ...]:
    """The card's fields, read back from the schema checked when it was opened (no
    pattern or default is checked again: a page view runs no server regex)."""
    return schema_fields(elicitation.requested_schema)


def elicitation_waiting(conversation: Conversation) -> ChatError | None:
    """Typed text while an MCP server waits on its card is refused (409
    `pending_elicitation`): answer, decline or cancel the card first."""
    pending = elicitation_pending(conversation_id=conversation.pk)
    if pending is None:
        return None
    return ChatError(
        "pending_elicitation",
        _(
            "“%(server)s” is waiting for your answer on its card. Submit, decline or "
            "cancel it first."
        )
        % {"server": pending.server_name},
        status=409,
        details={"elicitation_id": pending.pk},
    )


def elicitation_open_for_drafts(conversation: Conversation, elicitation_id: str) -> bool:
    """Whether the id names a pending card of this conversation (the registry's draft check)."""
    if not (elicitation_id.isascii() and elicitation_id.isdigit()) or len(elicitation_id) > 18:
        return False
    return Elicitation.objects.filter(
        conversation=conversation,
        pk=int(elicitation_id),
        status=ElicitationStatus.PENDING,
        expires_at__gt=timezone.now(),
    ).exists()


def elicitation_locate(conversation: Conversation, ref: str) -> Whereabouts | None:
    """Where the card behind the wait `ref` ("elicitation:<pk>") is, while it is pending;
    the MCP server that asks is named."""
    prefix, _sep, pk = ref.partition(":")
    if prefix != "elicitation" or not pk.isdigit():
        return None
    row = Elicitation.objects.filter(
        pk=int(pk), conversation_id=conversation.pk, status=ElicitationStatus.PENDING
    ).first()
    if row is None:
        return None
    prompt = " ".join(row.prompt.split())
    title = prompt[:120] if prompt else _("A few details, please")
    return Whereabouts(
        message_id=row.message_id, anchor=f"elic-{row.pk}", title=title, asker=row.server_name
    )

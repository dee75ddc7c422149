"""An MCP server's request for input as a machine client sees it (AG-UI interrupts,
`chat.edge.agui`), and its answer through the same `elicitation_answer` as the card's
buttons — its server gets the same `ElicitResult` whichever way the person answered.

- Form mode: the `responseSchema` is the server's own `requestedSchema` (the subset the
  card shows, checked when it opened); a `resolved` payload is the content, typed as that
  schema says, checked field by field (400 `elicitation_answer_invalid`,
  `details.fields`: field → what is wrong). It is the MCP `accept`.
- URL mode: the interrupt's `metadata.url` is the link as a browser reads it (only one
  the chat would offer to open); `resolved` with `{}` says the person opened it (MCP
  `accept`; the server then says when the step is done).
- `cancelled` declines (MCP `decline`); a card past its time can only be cancelled, and
  is closed as expired (its server hears `cancel`, as it would from the page).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation
from questionnaires.elicitations.links import link_of
from questionnaires.elicitations.models import Elicitation, ElicitationMode, ElicitationStatus
from questionnaires.elicitations.services import elicitation_answer, elicitation_expire
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.registry import Pending

NOTHING: dict[str, JsonValue] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


def _elicitation(conversation: Conversation, ref: str) -> Elicitation | None:
    prefix, _sep, pk = ref.partition(":")
    if prefix != "elicitation" or not pk.isdigit():
        return None
    return Elicitation.objects.filter(conversation=conversation, pk=int(pk)).first()


def elicitation_pending_for_client(conversation: Conversation, ref: str) -> Pending | None:
    row = _elicitation(conversation, ref)
    if row is None or row.status != ElicitationStatus.PENDING:
        return None
    metadata: dict[str, object] = {"server": row.server_name, "mode": row.mode}
    if row.mode == ElicitationMode.URL:
        link = link_of(row.url)
        if not link.openable:
            return None  # refused links never wait; nothing a client could open
        metadata["url"] = link.href
        schema = NOTHING
    else:
        schema = dict(row.requested_schema or NOTHING)
    return Pending(
        message=row.prompt,
        response_schema=schema,
        tool_call_id=row.tool_call_id,
        metadata=metadata,
    )


def elicitation_resolve_for_client(
    *, conversation: Conversation, ref: str, payload: object, user: User, lang: str
) -> None:
    row = _elicitation(conversation, ref)
    if row is None:
        raise ChatError(
            "elicitation_not_found", _("That request for input doesn't exist."), status=404
        )
    if payload is None:
        if row.status == ElicitationStatus.PENDING and row.expires_at <= timezone.now():
            elicitation_expire(elicitation=row)
            return
        elicitation_answer(elicitation=row, action="decline", data={}, user=user)
        return
    if not isinstance(payload, dict) or (row.mode == ElicitationMode.URL and payload):
        raise ChatError(
            "interrupt_payload_invalid",
            _("The answer must be an object as its responseSchema describes."),
        )
    elicitation_answer(elicitation=row, action="accept", data={}, user=user, typed=payload)

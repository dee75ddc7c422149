"""Asks requested by an agent: the `ask_user_options` tool and external runtimes.

Both check the spec-004 payload and the optional knowledge reference together, so every
problem comes back at once (code, path, message) and nothing invalid ever reaches
`services.ask_create` — which would drop it with an `error` event, or ask the question
without its reference. `ask_post` is the write behind
`POST /api/v1/conversations/<id>/asks`.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.metadata import AskPayload
from chat.core.models import Conversation, Message, Role
from chat.core.services import message_check_size, message_create
from questionnaires.asks.services import ask_create
from questionnaires.protocol import ProtocolError
from questionnaires.protocol.ask_payload import AskInvalid, ask_validate
from questionnaires.protocol.ask_reference import ReferenceInvalid, reference_validate


@dataclass(frozen=True)
class AskRequest:
    """A checked request: the normalized payload and reference (None when absent)."""

    ask: AskPayload
    reference: dict[str, str] | None


def ask_request_check(payload: object, reference: object = None, *, lang: str) -> AskRequest:
    """The normalized ask and reference, or :class:`AskInvalid` listing every problem of
    both (payload errors first; reference errors have `reference.*` codes and paths),
    with messages in `lang`."""
    errors: list[ProtocolError] = []
    ask: AskPayload = {}
    normalized: dict[str, str] | None = None
    try:
        ask = ask_validate(payload, lang=lang)
    except AskInvalid as invalid:
        errors.extend(invalid.errors)
    if reference is not None:
        try:
            normalized = reference_validate(reference, lang=lang)
        except ReferenceInvalid as invalid:
            errors.extend(invalid.errors)
    if errors:
        raise AskInvalid(tuple(errors))
    return AskRequest(ask=ask, reference=normalized)


def ask_invalid_error(invalid: AskInvalid) -> ChatError:
    return ChatError(
        "ask_invalid",
        _("The question can't be shown. Fix every listed problem and send it again."),
        details={"errors": [e.to_dict() for e in invalid.errors]},
    )


def ask_post(
    *, conversation: Conversation, payload: object, reference: object = None, text: object = ""
) -> Message:
    """An external runtime asks the user: an optional intro message, then the ask.

    Raises ChatError `ask_invalid` (every problem in `details["errors"]`) before anything
    is written; `text` must be a string within the message size limit.
    """
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise ChatError("ask_text_invalid", _("“text” must be a string."))
    text = text.strip()
    message_check_size(text)
    try:
        request = ask_request_check(payload, reference, lang=conversation.language)
    except AskInvalid as invalid:
        raise ask_invalid_error(invalid) from None
    with transaction.atomic():
        if text:
            message_create(conversation=conversation, role=Role.ASSISTANT, content=text)
        message = ask_create(
            conversation=conversation, payload=request.ask, reference=request.reference
        )
    if message is None:  # unreachable: the payload was validated above
        raise ChatError("ask_invalid", _("The question can't be shown."))
    return message

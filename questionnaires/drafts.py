"""Card drafts: what a person typed into an open card, kept on the server until they answer
it, so a reload, another tab or another device shows it again (per user, per card).

A card names itself with a key `<draft prefix>:<id>` (each kind has its prefix in the
registry: `q:` inline cards, `form:` deferred forms, `ask:` structured asks, `elic:` MCP
elicitations) and its form posts its fields as the person types (debounced, static/js/
drafts.js). Rendering restores them; answering the card, by any path, deletes them.

A draft is kept only for a card that exists in the person's own conversation and can still
be answered (the kind says, `Kind.draft_open`), and only up to `MAX_DRAFT_BYTES` counting
field names and values alike: however many requests a client sends, the drafts of a person
are bounded by the cards open to them. A refused draft changes nothing stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.conf import settings
from django.db import models
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation
from questionnaires.registry import Drafts, kinds

MAX_DRAFT_BYTES = 50_000  # UTF-8 bytes of every field name and value together
MAX_FIELDS = 200
MAX_KEY = 210
# The card forms' own fields (answer-<n>, other-<n>, text, value); anything else posted with
# them (the CSRF token, the card key) is not part of what the person typed.
FIELD_PREFIXES = ("answer", "other", "text", "value")


class CardDraft(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    card = models.CharField(max_length=MAX_KEY)
    # The card form's fields as posted: {name: [value, ...]}.
    fields = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "questionnaires"
        constraints = [
            models.UniqueConstraint(fields=["user", "conversation", "card"], name="draft_once")
        ]

    def __str__(self) -> str:
        return self.card


def draft_fields(pairs: Iterable[tuple[str, Sequence[str]]]) -> dict[str, list[str]]:
    """The card's own fields of a posted form, refused (413 `draft_too_large`) past
    `MAX_FIELDS` fields or `MAX_DRAFT_BYTES` bytes of names and values."""
    fields: dict[str, list[str]] = {}
    size = 0
    for name, values in pairs:
        if not name.startswith(FIELD_PREFIXES):
            continue
        kept = [str(v) for v in values]
        size += len(name.encode()) + sum(len(v.encode()) for v in kept)
        fields[name] = kept
        if len(fields) > MAX_FIELDS or size > MAX_DRAFT_BYTES:
            raise ChatError("draft_too_large", _("This draft is too large to keep."), status=413)
    return fields


def draft_card_check(*, conversation: Conversation, card: str) -> None:
    """Refuse a key that names no open card of this conversation: 400 `draft_invalid` (not a
    card key), 404 `draft_card_not_found` (no such card here, or it can no longer be
    answered)."""
    prefix, sep, ident = card.partition(":")
    kind = next((k for k in kinds() if k.draft_prefix and k.draft_prefix == prefix), None)
    if not sep or not ident or len(card) > MAX_KEY or kind is None or kind.draft_open is None:
        raise ChatError("draft_invalid", _("Unknown card."))
    if not kind.draft_open(conversation, ident):
        raise ChatError(
            "draft_card_not_found",
            _("This card can’t be answered any more, so its draft isn’t kept."),
            status=404,
        )


def draft_save(
    *,
    user_id: int,
    conversation: Conversation,
    card: str,
    pairs: Iterable[tuple[str, Sequence[str]]],
) -> None:
    """Keep the fields of an open card (`pairs`: `(name, [values])` as posted). Every check
    comes before the write: a refused draft stores nothing and changes no saved one."""
    if conversation.owner_id != user_id:  # the caller found it for this user; never anyone else's
        raise ChatError("draft_card_not_found", _("Unknown card."), status=404)
    fields = draft_fields(pairs)
    draft_card_check(conversation=conversation, card=card)
    CardDraft.objects.update_or_create(
        user_id=user_id, conversation=conversation, card=card, defaults={"fields": fields}
    )


def drafts_for(*, conversation: Conversation) -> Drafts:
    """The drafts of the conversation's owner (the only person who can open it), by card
    key: one query."""
    rows = CardDraft.objects.filter(user_id=conversation.owner_id, conversation=conversation)
    return {row.card: row.fields for row in rows.only("card", "fields")}


def draft_clear(*, conversation: Conversation, card: str) -> None:
    """The card was answered: nobody's draft of it is needed any more."""
    CardDraft.objects.filter(conversation=conversation, card=card).delete()

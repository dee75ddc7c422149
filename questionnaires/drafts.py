"""Card drafts: what a person typed into an open card, kept on the server until they
submit it, so a reload, another tab or another device shows it again (per user, per card).

A card names itself with a key — `q:<questionnaire id>` (inline cards), `form:<ask id>`
(deferred forms), `ask:<message id>` (structured asks), `elic:<elicitation id>` (MCP elicitations) — and its form posts its fields
here as the person types (debounced). Rendering restores them; answering the card, by
any path, deletes them.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from chat.core.errors import ChatError
from chat.core.models import Conversation
from chat.edge.http import conversation_for_page

MAX_DRAFT_CHARS = 50_000
MAX_FIELDS = 200
KEY = re.compile(r"^(q|form|ask|elic):[\w.:-]{1,200}$")
IGNORED = frozenset({"csrfmiddlewaretoken", "card_key"})


class CardDraft(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    card = models.CharField(max_length=210)
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


def draft_save(*, user: Any, conversation: Conversation, card: str, data: Any) -> None:
    """Keep the fields of an open card (`data`: a QueryDict or {name: [values]})."""
    if not KEY.match(card):
        raise ChatError("draft_invalid", _("Unknown card."))
    fields = {
        name: [str(v) for v in values]
        for name, values in data.lists()
        if name not in IGNORED and name.startswith(("answer", "other", "text", "value"))
    }
    if len(fields) > MAX_FIELDS or sum(len(v) for vs in fields.values() for v in vs) > (
        MAX_DRAFT_CHARS
    ):
        raise ChatError("draft_too_large", _("This draft is too large to keep."), status=413)
    CardDraft.objects.update_or_create(
        user=user, conversation=conversation, card=card, defaults={"fields": fields}
    )


Drafts = dict[str, dict[str, list[str]]]


def drafts_for(*, conversation: Conversation) -> Drafts:
    """The drafts of the conversation's owner (the only person who can open it), by card
    key: one query."""
    rows = CardDraft.objects.filter(user_id=conversation.owner_id, conversation=conversation)
    return {row.card: row.fields for row in rows.only("card", "fields")}


def inline_drafts(
    drafts: Drafts, *, message_id: int, call_ids: list[str]
) -> dict[str, dict[str, list[str]]]:
    """The drafts of one message's inline cards, by questionnaire id (`<message id>_qN`
    for blocks in its text, the tool call id for `questionnaire_async` cards)."""
    own: dict[str, dict[str, list[str]]] = {}
    for key, fields in drafts.items():
        kind, _sep, qid = key.partition(":")
        if kind == "q" and (qid.startswith(f"{message_id}_q") or qid in call_ids):
            own[qid] = fields
    return own


def draft_clear(*, conversation: Conversation, card: str) -> None:
    """The card was answered: nobody's draft of it is needed any more."""
    CardDraft.objects.filter(conversation=conversation, card=card).delete()


@login_required
@require_POST
def draft_save_view(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """An open card's fields, posted as the person types (htmx, debounced): 204."""
    conversation = conversation_for_page(request, conversation_id)
    try:
        draft_save(
            user=request.user,
            conversation=conversation,
            card=request.POST.get("card_key", ""),
            data=request.POST,
        )
    except ChatError as error:
        return HttpResponse(error.message, status=error.status)
    return HttpResponse(status=204)

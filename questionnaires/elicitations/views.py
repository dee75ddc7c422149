"""Answering an elicitation card: htmx (the card swaps itself) or a plain form POST
(redirect back to the conversation; a refusal shows the page with the card and its
errors, the typed values kept). URL mode's Open posts `accept` from a form with
target=_blank; that tab gets a page that goes on to the link: the server never fetches it."""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_POST

from chat.core.errors import ChatError
from chat.edge.answers import answer_response, refused_page
from chat.edge.http import HtmxRequest, conversation_for_page, signed_in
from questionnaires.elicitations.kind import KIND
from questionnaires.elicitations.models import Elicitation
from questionnaires.elicitations.presenter import ElicitationDraft, elicitation_card
from questionnaires.elicitations.selectors import elicitation_get
from questionnaires.elicitations.services import elicitation_answer
from questionnaires.registry import Refused


@login_required
@require_POST
def elicitation_answer_view(
    request: HtmxRequest, conversation_id: int, elicitation_id: int
) -> HttpResponse:
    """`action` = accept | decline | cancel, plus the form's `answer-<field>` values."""
    conversation = conversation_for_page(request, conversation_id)
    try:
        row = elicitation_get(conversation=conversation, elicitation_id=elicitation_id)
    except ChatError:
        raise Http404() from None
    draft, error = None, None
    actions = request.POST.getlist("action")  # two actions at once are no answer
    try:
        row = elicitation_answer(
            elicitation=row,
            action=actions[0] if len(actions) == 1 else None,
            data={k: v for k, v in request.POST.lists() if k.startswith("answer-")},
            user=signed_in(request),
            zone=timezone.get_current_timezone(),
        )
    except ChatError as refused:
        draft = ElicitationDraft(_typed(refused), refused.field_messages(), refused.message)
        error = refused
        row.refresh_from_db()
    else:
        if row.mode == "url" and row.action == "accept":
            return _opening(request, row)
    card = elicitation_card(row, draft=draft)
    return answer_response(
        request,
        conversation=conversation,
        error=error,
        fragment=lambda: (KIND.card_template, {"card": card}),
        page=refused_page(conversation, Refused(KIND.name, row.message_id, card)),
        anchor=card.dom_id,
    )


def _typed(error: ChatError) -> dict[str, list[str]]:
    """What was typed into a refused card (`details["values"]`: field -> values)."""
    values = error.details.get("values")
    if not isinstance(values, Mapping):
        return {}
    return {str(k): [str(x) for x in v] for k, v in values.items() if isinstance(v, list | tuple)}


def _opening(request: HtmxRequest, row: Elicitation) -> HttpResponse:
    """The Open form's new tab: a page that goes on to the link (a redirect would break
    the CSP's form-action 'self'), telling the site nothing about the chat."""
    card = elicitation_card(row)
    context = {"card": card, "url": card.url.href if card.url else ""}
    response = render(request, "questionnaires/elicitation_open.html", context)
    response["Referrer-Policy"] = "no-referrer"
    return response

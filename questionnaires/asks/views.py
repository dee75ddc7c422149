"""Answering asks and editing slots: htmx fragments and plain no-JS form posts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from chat.core import selectors as chat_selectors
from chat.core.errors import ChatError
from chat.core.models import Conversation
from chat.edge.forms import MessageForm
from chat.edge.http import api_view, conversation_for_page, json_body
from chat.edge.page import conversation_context
from questionnaires.asks import selectors, services
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.presenters import ask_view_single, state_panel
from questionnaires.registry import card_of

ACTIONS = {
    "option": StructuredAnswer.Source.OPTION_CLICK,
    "free_text": StructuredAnswer.Source.FREE_TEXT,
    "skip": StructuredAnswer.Source.SKIPPED,
}


def _ask(conversation: Conversation, message_id: int):
    try:
        return selectors.ask_get(conversation=conversation, message_id=message_id)
    except ChatError:
        raise Http404() from None


@login_required
@require_GET
def ask_fragment(request: HttpRequest, conversation_id: int, message_id: int) -> HttpResponse:
    """One ask widget, current state: open tabs refresh it when something was answered."""
    conversation = conversation_for_page(request, conversation_id)
    message = _ask(conversation, message_id)
    view = ask_view_single(conversation=conversation, message=message)
    if view.answerable and not view.answer:
        # Still open: nothing to change, and a re-render would wipe what the user is
        # typing into it. 204 leaves the widget alone.
        return HttpResponse(status=204)
    return render(request, view.template, {"ask": view})


@login_required
@require_POST
def ask_answer(request: HttpRequest, conversation_id: int, message_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    message = _ask(conversation, message_id)
    action = request.POST.get("action", "option")
    text = request.POST.get("text", "")
    answer = {
        "field": message.metadata["ask_user_options"]["field"],
        "turn_id": message.metadata.get("turn_id", ""),
        "source": ACTIONS.get(action, "invalid"),
        "value": request.POST.get("value"),
        "raw_text": text if action == "free_text" else "",
    }
    error, status = "", 200
    try:
        services.structured_answer_submit(
            conversation=conversation, answer=answer, ask_message=message
        )
    except ChatError as exc:
        error, status = exc.message, exc.status
    if not request.htmx:
        if not error:
            return redirect("chat:conversation", conversation_id=conversation.pk)
        context = conversation_context(conversation=conversation, form=MessageForm())
        view = ask_view_single(conversation=conversation, message=message, error=error, typed=text)
        context["items"] = [
            replace(i, cards=(card_of("ask", view),)) if i.message.pk == message.pk else i
            for i in context["items"]
        ]
        return render(request, "chat/conversation.html", context, status=status)
    view = ask_view_single(conversation=conversation, message=message, error=error, typed=text)
    context = {"ask": view, "panel": state_panel(conversation=conversation)}
    return render(request, "chat/asks/answer_response.html", context, status=status)


@login_required
@require_GET
def state_fragment(request: HttpRequest, conversation_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    context = {"panel": state_panel(conversation=conversation)}
    return render(request, "chat/asks/state_panel.html#body", context)


@login_required
@require_POST
def slot_edit(request: HttpRequest, conversation_id: int, field: str) -> HttpResponse:
    """Correct a slot from the side panel: a new structured answer with source user_edit."""
    conversation = conversation_for_page(request, conversation_id)
    status, context_extra = 200, {}
    try:
        services.slot_edit(
            conversation=conversation,
            field=field,
            value=request.POST.get("value") or None,
            text=request.POST.get("text", ""),
        )
    except ChatError as exc:
        status = exc.status
        context_extra = {"edit_error": {"field": field, "error": exc.message}}
    if not request.htmx and status == 200:
        return redirect("chat:conversation", conversation_id=conversation.pk)
    conversation.refresh_from_db()
    if not request.htmx:  # the page again, the error beside the slot
        context = conversation_context(conversation=conversation, form=MessageForm())
        context.update(context_extra)
        return render(request, "chat/conversation.html", context, status=status)
    context = {"panel": state_panel(conversation=conversation), **context_extra}
    return render(request, "chat/asks/state_panel.html#body", context, status=status)


@api_view(("POST",))
def api_answers(request: HttpRequest, conversation_id: int) -> JsonResponse:
    """`POST /api/v1/conversations/<id>/answers` with a spec-004 `structured_answer`."""
    conversation = chat_selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    row, created = services.structured_answer_submit(
        conversation=conversation, answer=json_body(request)
    )
    conversation.refresh_from_db(fields=["state"])
    return JsonResponse(
        {
            "answer": answer_json(row),
            "created": created,
            "consultation_state": conversation.state.get("consultation_state", {}),
            "missing_slots": conversation.state.get("missing_slots", []),
            "confidence": conversation.state.get("confidence", {}),
        },
        status=201 if created else 200,
    )


def answer_json(row: StructuredAnswer) -> dict[str, Any]:
    return {
        "id": row.pk,
        "type": "structured_answer",
        "field": row.field,
        "value": row.value,
        "display_text": row.display_text,
        "raw_text": row.raw_text,
        "source": row.source,
        "confidence": row.confidence,
        "turn_id": row.turn_id,
        "message_id": row.user_message_id,
    }

"""Answering asks and editing slots: htmx fragments and plain no-JS form posts."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from chat.core.errors import ChatError
from chat.core.metadata import metadata_of
from chat.core.models import Conversation, Message
from chat.edge.answers import Notice, answer_response, refused_page
from chat.edge.forms import MessageForm
from chat.edge.http import HtmxRequest, conversation_for_page
from chat.edge.page import conversation_page, refusal_view
from questionnaires.asks import selectors, services
from questionnaires.asks.kind import KIND
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.presenter import AskView, ask_view_single, state_panel
from questionnaires.registry import Refused

ACTIONS = {
    "option": StructuredAnswer.Source.OPTION_CLICK,
    "free_text": StructuredAnswer.Source.FREE_TEXT,
    "skip": StructuredAnswer.Source.SKIPPED,
}


def _ask(conversation: Conversation, message_id: int) -> Message:
    try:
        return selectors.ask_get(conversation=conversation, message_id=message_id)
    except ChatError:
        raise Http404() from None


@login_required
@require_GET
def ask_fragment_view(request: HtmxRequest, conversation_id: int, message_id: int) -> HttpResponse:
    """One ask widget, current state: open tabs refresh it when something was answered."""
    conversation = conversation_for_page(request, conversation_id)
    message = _ask(conversation, message_id)
    view = ask_view_single(conversation=conversation, message=message)
    was_queued = request.GET.get("queued") == "1"
    if view.answerable and not view.answer and view.queued == was_queued:
        # Unchanged: a re-render would wipe what the user is typing into it. 204 leaves
        # the widget alone. (A queued ask whose turn came renders, open.)
        return HttpResponse(status=204)
    return render(request, view.template, {"ask": view, "card": view})


@login_required
@require_POST
def ask_answer_view(request: HtmxRequest, conversation_id: int, message_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    message = _ask(conversation, message_id)
    action = request.POST.get("action", "option")
    text = request.POST.get("text", "")
    if action == "option" and not request.POST.get("value") and text.strip():
        action = "free_text"  # the card's one Send: no option chosen, words typed
    answer = {
        "field": (metadata_of(message).get("ask_user_options") or {}).get("field", ""),
        "turn_id": metadata_of(message).get("turn_id", ""),
        "source": ACTIONS.get(action, "invalid"),
        "value": request.POST.get("value"),
        "raw_text": text if action == "free_text" else "",
    }
    error = None
    try:
        services.ask_answer(conversation=conversation, answer=answer, ask_message=message)
    except ChatError as exc:
        error = exc
    view = ask_view_single(
        conversation=conversation, message=message, error=error.message if error else "", typed=text
    )
    notice = None
    if error is not None and view.answer is not None:  # answered elsewhere: nothing to fix
        notice = Notice(message_id=message.pk, code="answered", text=error.message)
    return _answer_response(request, conversation, message, view, error, notice)


@login_required
@require_POST
def ask_change_view(request: HtmxRequest, conversation_id: int, message_id: int) -> HttpResponse:
    """ "Change answer" on an answered ask (issue 27): a click on another option, or typed
    text (`action=free_text`), amending the answer version the person saw."""
    conversation = conversation_for_page(request, conversation_id)
    message = _ask(conversation, message_id)
    free = request.POST.get("action") == "free_text"
    text = request.POST.get("text", "") if free else ""
    error = None
    try:
        services.ask_answer_change(
            conversation=conversation,
            ask_message=message,
            version=_version(request.POST.get("version", "")),
            source=StructuredAnswer.Source.FREE_TEXT
            if free
            else StructuredAnswer.Source.OPTION_CLICK,
            value=None if free else request.POST.get("value"),
            text=text,
        )
    except ChatError as exc:
        error = exc
    view = ask_view_single(
        conversation=conversation,
        message=message,
        error=error.message if error else "",
        typed=text,
        changing=True,
    )
    return _answer_response(request, conversation, message, view, error)


def _answer_response(
    request: HtmxRequest,
    conversation: Conversation,
    message: Message,
    view: AskView,
    error: ChatError | None,
    notice: Notice | None = None,
) -> HttpResponse:
    """The ask again (htmx: with the state panel), the page again without JavaScript."""
    return answer_response(
        request,
        conversation=conversation,
        error=error,
        fragment=lambda: (
            "chat/asks/answer_response.html",
            {"ask": view, "card": view, "panel": state_panel(conversation=conversation)},
        ),
        page=refused_page(conversation, Refused(KIND.name, message.pk, view)),
        notice=notice,
    )


def _version(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit() and 0 < len(raw) <= 12):
        raise ChatError("answer_invalid", _("“version” must be a positive integer."))
    return int(raw)


@login_required
@require_GET
def state_fragment_view(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    context = {"panel": state_panel(conversation=conversation)}
    return render(request, "chat/asks/state_panel.html#body", context)


@login_required
@require_POST
def slot_edit_view(request: HtmxRequest, conversation_id: int, field: str) -> HttpResponse:
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
        context_extra = {
            "edit_error": {"field": field, "error": exc.message, "refusal": refusal_view(exc)}
        }
    if not request.htmx and status == 200:
        return redirect("chat:conversation", conversation_id=conversation.pk)
    conversation.refresh_from_db()
    if not request.htmx:  # the page again, the error beside the slot
        context = conversation_page(conversation=conversation, form=MessageForm())
        context.update(context_extra)
        return render(request, "chat/conversation.html", context, status=status)
    context = {"panel": state_panel(conversation=conversation), **context_extra}
    return render(request, "chat/asks/state_panel.html#body", context, status=status)

"""Answering a deferred interactive form from the page (htmx or a plain form POST).

Thin: build the answer payload from the POST, call `answers.interactive_form_answer` (the one
entry point, which also serves the JSON API), render the card or the composer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from chat.core.errors import ChatError
from chat.core.models import Conversation
from chat.edge.answers import Rendered, answer_response
from chat.edge.forms import MessageForm
from chat.edge.http import HtmxRequest, conversation_for_page
from questionnaires.forms.answers import interactive_form_answer, interactive_form_change
from questionnaires.forms.presenter import FormCard, FormDraft, form_cards_for
from questionnaires.forms.selectors import form_for_ask, form_for_tool_call, form_pending

CARD_TEMPLATE = "questionnaires/cards/interactive_form.html"


@login_required
@require_POST
def interactive_form_answer_view(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    """Submit (`status=answered`) or cancel (`status=cancelled`) the pending form."""
    conversation = conversation_for_page(request, conversation_id)
    status = "cancelled" if request.POST.get("status") == "cancelled" else "answered"
    payload = _payload_from_post(
        request.POST, status=status, message=request.POST.get("message", "")
    )
    draft, error = None, None
    try:
        interactive_form_answer(conversation=conversation, payload=payload)
    except ChatError as refused:
        draft = FormDraft(payload["answers"], refused.field_messages(), refused.message)
        error = refused
    return _answer_response(request, conversation, payload["tool_use_id"], draft, error)


@login_required
@require_POST
def interactive_form_cancel_and_send_view(
    request: HtmxRequest, conversation_id: int
) -> HttpResponse:
    """The composer's "Cancel the form and send this text": the typed text goes with the
    cancellation, so the model reads it as the form's tool result and nothing is lost."""
    conversation = conversation_for_page(request, conversation_id)
    form = MessageForm(request.POST)
    pending = form_pending(conversation_id=conversation.pk)
    code = 200
    if form.is_valid():
        payload = {
            "type": "interactive_form_question",
            "tool_use_id": pending.tool_use_id if pending else "",
            "status": "cancelled",
            "message": form.cleaned_data["content"],
        }
        try:
            interactive_form_answer(conversation=conversation, payload=payload)
        except ChatError as error:
            form.add_error("content", error.message)
            code = error.status
        else:
            if not request.htmx:
                return redirect("chat:conversation", conversation_id=conversation.pk)
            form = MessageForm()
    else:
        code = 400
    if not request.htmx:
        return redirect("chat:conversation", conversation_id=conversation.pk)
    card = _card(conversation, pending.tool_use_id, None) if pending else None
    context = {"conversation": conversation, "form": form, "oob_card": card}
    return render(request, "questionnaires/interactive_form_composer.html", context, status=code)


@login_required
@require_http_methods(["GET", "POST"])
def interactive_form_change_view(
    request: HtmxRequest, conversation_id: int, ask_id: str
) -> HttpResponse:
    """ "Change answer" on an answered form whose run has finished (issue 27): GET reopens
    it with the latest answers, POST sends the change of `version`."""
    conversation = conversation_for_page(request, conversation_id)
    form = form_for_ask(conversation_id=conversation.pk, ask_id=ask_id)
    if form is None or form.message is None:
        raise Http404()
    if request.method == "POST":
        draft, error = _change(conversation, ask_id, request.POST)
        return _answer_response(request, conversation, form.tool_use_id, draft, error)
    answers = (form.answer or {}).get("answers", {})
    reopened = _card_rendered(
        conversation,
        form.tool_use_id,
        FormDraft(answers=answers, editing=True),
        CARD_TEMPLATE if request.htmx else "questionnaires/interactive_form_page.html",
    )
    template, context = reopened()
    return render(request, template, context)


def _change(
    conversation: Conversation, ask_id: str, post: QueryDict
) -> tuple[FormDraft | None, ChatError | None]:
    """POST a change: the card's draft to show again (None: the latest answer) and the
    refusal, if any."""
    payload = _payload_from_post(post, status="answered")
    version = post.get("version", "")
    try:
        if not (version.isascii() and version.isdigit() and 0 < len(version) <= 9):
            raise ChatError("answer_invalid", _("“version” must be a positive integer."))
        interactive_form_change(
            conversation=conversation, ask_id=ask_id, version=int(version), payload=payload
        )
    except ChatError as error:
        if error.code in ("questionnaire_version_stale", "questionnaire_not_answered"):
            return None, error
        return FormDraft(
            payload["answers"], error.field_messages(), error.message, editing=True
        ), error
    return None, None


def _answer_response(
    request: HtmxRequest,
    conversation: Conversation,
    tool_use_id: str,
    draft: FormDraft | None,
    error: ChatError | None,
) -> HttpResponse:
    """The card again (htmx), or its page (no JavaScript), with the refusal if any."""
    return answer_response(
        request,
        conversation=conversation,
        error=error,
        fragment=_card_rendered(conversation, tool_use_id, draft, CARD_TEMPLATE),
        page=_card_rendered(
            conversation, tool_use_id, draft, "questionnaires/interactive_form_page.html"
        ),
    )


def _card_rendered(
    conversation: Conversation, tool_use_id: str, draft: FormDraft | None, template: str
) -> Callable[[], Rendered]:
    """The form's card in `template` (its context: `card`, `conversation`); 404 if gone."""

    def rendered() -> Rendered:
        found = _card(conversation, tool_use_id, draft)
        if found is None:
            raise Http404()
        return template, {"card": found, "conversation": conversation}

    return rendered


def _card(conversation: Conversation, tool_use_id: str, draft: FormDraft | None) -> FormCard | None:
    form = form_for_tool_call(conversation_id=conversation.pk, tool_use_id=tool_use_id)
    if form is None or form.message is None:
        return None
    cards = form_cards_for(conversation=conversation, messages=[form.message], draft=draft)
    return next((c for c in cards.get(form.message.pk, []) if c.tool_use_id == tool_use_id), None)


class FormPost(TypedDict):
    """The spec-003 answer payload a card's HTML form makes (checked like any other)."""

    type: str
    tool_use_id: str
    ask_id: str
    status: str
    answers: dict[str, str | list[str]]
    message: str
    touched: list[str]


def _payload_from_post(post: QueryDict, *, status: str, message: str = "") -> FormPost:
    """The answer payload of the card's HTML form (`answer-<question id>` fields)."""
    answers: dict[str, str | list[str]] = {}
    touched: list[str] = []
    for key in post:
        if key.startswith("answer-"):
            values = post.getlist(key)
            answers[key.removeprefix("answer-")] = values[0] if len(values) == 1 else values
        elif key.startswith("touched-") and "1" in post.getlist(key):
            touched.append(key.removeprefix("touched-"))
    return {
        "type": "interactive_form_question",
        "tool_use_id": str(post.get("tool_use_id", "")),
        "ask_id": str(post.get("ask_id", "")),
        "status": status,
        "answers": answers if status == "answered" else {},
        "message": message,
        "touched": touched if status == "answered" else [],
    }

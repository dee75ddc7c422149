"""Answering a questionnaire card: the submit view and the chat side of the submit port.

The rules live in ``questionnaires.services.questionnaire_submit``; this module adapts
HTTP (htmx, plain form POST, JSON) to it and supplies the chat operations it needs
(``ChatSubmitPort``), since ``questionnaires`` never imports ``chat``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from chat import selectors, services
from chat.agent.dispatch import run_start_for_message
from chat.errors import ChatError, NotFound
from chat.forms import MessageForm
from chat.interactive_forms import interactive_form_refuse_if_pending
from chat.models import Conversation, Message, Role
from chat.presenters import conversation_context, message_items_for
from questionnaires.cards import Draft, answers_from_form
from questionnaires.errors import SubmitRefused
from questionnaires.services import questionnaire_find, questionnaire_submit


class ChatSubmitPort:
    """The chat operations ``questionnaire_submit`` needs."""

    def latest_card_seq(self, *, conversation: Conversation) -> int | None:
        return selectors.message_latest_visible_assistant_seq(conversation=conversation)

    def answer_post(
        self, *, conversation: Conversation, content: str, display_content: str
    ) -> Message:
        try:
            services.message_check_size(content)
            # While a deferred form waits, it must be answered or cancelled first.
            interactive_form_refuse_if_pending(conversation=conversation)
        except ChatError as error:
            raise SubmitRefused(error.code, error.message, status=error.status) from None
        return services.message_create(
            conversation=conversation,
            role=Role.USER,
            content=content,
            display_content=display_content,
        )

    def card_locked(
        self, *, conversation: Conversation, message_id: int, questionnaire_id: str
    ) -> None:
        services.event_emit(
            conversation_id=conversation.pk,
            name="card_locked",
            data={"message_id": message_id, "questionnaire_id": questionnaire_id},
        )

    def run_start(self, *, conversation: Conversation, message: Message) -> None:
        run_start_for_message(conversation=conversation, message=message)


PORT = ChatSubmitPort()


@login_required
@require_POST
def questionnaire_submit_view(
    request: HttpRequest, conversation_id: int, message_id: int
) -> HttpResponse:
    """POST a card's answers (htmx, plain form, or JSON ``{questionnaire_id, answers,
    other_text}``).  Another user's conversation or an unknown card is a 404."""
    conversation, message = _card_message(request, conversation_id, message_id)
    lang = translation.get_language() or "en"
    draft = Draft(
        questionnaire_id=request.POST.get("questionnaire_id", ""), answers={}, other_text={}
    )
    try:
        questionnaire_id, answers, other_text = _submitted(request, conversation, message, lang)
        draft = Draft(questionnaire_id=questionnaire_id, answers=answers, other_text=other_text)
        result = questionnaire_submit(
            conversation=conversation,
            message_id=message.pk,
            questionnaire_id=questionnaire_id,
            answers=answers,
            other_text=other_text,
            user=request.user,
            lang=lang,
            port=PORT,
        )
    except SubmitRefused as refused:
        return _refused(request, conversation, message, draft, refused)
    if _wants_json(request):
        body = {"message_id": result.user_message.pk, "seq": result.user_message.seq}
        return JsonResponse({**body, "questionnaire_id": questionnaire_id}, status=201)
    if not request.htmx:
        url = reverse("chat:conversation", args=[conversation.pk])
        return redirect(f"{url}#msg-{result.user_message.pk}")
    card_item, user_item = message_items_for(
        conversation=conversation, messages=[message, result.user_message]
    )
    context = {"card_item": card_item, "user_item": user_item}
    return render(request, "questionnaires/submit_done.html", context)


def _wants_json(request: HttpRequest) -> bool:
    return request.content_type == "application/json"


def _card_message(
    request: HttpRequest, conversation_id: int, message_id: int
) -> tuple[Conversation, Message]:
    try:
        conversation = selectors.conversation_get_for_user(
            user=request.user, conversation_id=conversation_id
        )
        message = selectors.message_get(conversation=conversation, message_id=message_id)
    except NotFound:
        raise Http404() from None
    return conversation, message


def _submitted(
    request: HttpRequest, conversation: Conversation, message: Message, lang: str
) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(questionnaire id, answers by question id, other text by question id)."""
    if _wants_json(request):
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise SubmitRefused("invalid_json", _("Send a JSON object."), status=400)
        answers, other = body.get("answers", {}), body.get("other_text") or {}
        if not isinstance(answers, dict) or not isinstance(other, dict):
            raise SubmitRefused(
                "answer_invalid", _("“answers” and “other_text” must be objects."), status=400
            )
        return str(body.get("questionnaire_id", "")), answers, other
    questionnaire_id = request.POST.get("questionnaire_id", "")
    questionnaire = questionnaire_find(
        conversation_id=conversation.pk,
        message=message,
        questionnaire_id=questionnaire_id,
        lang=lang,
    )
    answers, other = answers_from_form(questionnaire, dict(request.POST.lists()))
    return questionnaire_id, answers, other


def _refused(
    request: HttpRequest,
    conversation: Conversation,
    message: Message,
    draft: Draft,
    refused: SubmitRefused,
) -> HttpResponse:
    """JSON for API-ish requests; otherwise the card again, with the reason and the
    user's selections: just the message for htmx, the whole page without JavaScript."""
    if _wants_json(request):
        return JsonResponse(refused.as_dict(), status=refused.status)
    if refused.status == 404:
        raise Http404(refused.message)
    status = refused.status
    draft = replace(
        draft,
        code=refused.code,
        message=refused.message,
        errors=refused.errors,
        still_interactive=refused.code == "answer_invalid",
    )
    if request.htmx:
        (item,) = message_items_for(
            conversation=conversation, messages=[message], draft=(message.pk, draft)
        )
        return render(request, "chat/conversation.html#message", {"item": item}, status=status)
    context = conversation_context(
        conversation=conversation, form=MessageForm(), draft=(message.pk, draft)
    )
    return render(request, "chat/conversation.html", context, status=status)

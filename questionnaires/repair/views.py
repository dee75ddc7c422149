"""The repair prompt's fragment and its one form (confirm, answer, skip, send instead)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from chat import usecases
from chat.core.errors import ChatError
from chat.edge.http import conversation_for_page, signed_in
from questionnaires.repair.presenter import prompt_for
from questionnaires.repair.services import prompt_answer


@login_required
@require_GET
def repair_region(request: HttpRequest, conversation_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    context = {"conversation": conversation, "repair": prompt_for(conversation)}
    return render(request, "questionnaires/repair/region.html", context)


@login_required
@require_POST
def repair_answer(request: HttpRequest, conversation_id: int, repair_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    values = {key: request.POST.getlist(key) for key in request.POST if key.startswith("f-")}
    try:
        prompt_answer(
            conversation=conversation,
            repair_id=repair_id,
            values=values,
            action=request.POST.get("action", "answer"),
            user=signed_in(request),
            lang=getattr(request, "LANGUAGE_CODE", conversation.language),
            post=lambda text: usecases.message_post_user(conversation=conversation, content=text),
        )
    except ChatError as error:
        context = {
            "conversation": conversation,
            "repair": prompt_for(conversation),
            "error": error,
        }
        response = render(
            request, "questionnaires/repair/region.html", context, status=error.status
        )
        response["X-Error-Code"] = error.code
        return response
    if getattr(request, "htmx", False):
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return redirect("chat:conversation", conversation_id=conversation.pk)

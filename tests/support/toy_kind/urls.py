from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_POST

from chat.core.errors import ChatError
from chat.edge.http import conversation_for_page
from tests.support.toy_kind.kind import toy_answer


@login_required
@require_POST
def toy_answer_view(request: HttpRequest, conversation_id: int, message_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    try:
        toy_answer(conversation=conversation, message_id=message_id, text=request.POST["text"])
    except ChatError as error:
        return HttpResponse(error.message, status=error.status)
    return redirect("chat:conversation", conversation_id=conversation.pk)


urlpatterns = [
    path(
        "conversations/<int:conversation_id>/toys/<int:message_id>",
        toy_answer_view,
        name="toy_answer",
    ),
]

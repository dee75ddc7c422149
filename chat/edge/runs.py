"""The run-status region: progress + Stop while a run works, the error + Retry after."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from chat.core import selectors
from chat.core.errors import ChatError
from chat.core.models import Conversation, Run
from chat.edge.http import conversation_for_page
from chat.runs import services

TEMPLATE = "chat/run_status.html"


def _region(
    request: HttpRequest, conversation: Conversation, error: ChatError | None = None
) -> HttpResponse:
    # A refusal answers its status (409, 429) with the region showing the error (its code
    # in data-error-code) where the user clicked: #run-status has data-swap-errors, so
    # the page swaps it in (static/js/chat.js).
    run = selectors.run_latest(conversation=conversation)
    context = {"conversation": conversation, "run": run, "action_error": error}
    response = render(request, TEMPLATE, context, status=error.status if error else 200)
    if error is not None and "retry_after" in error.details:
        response["Retry-After"] = str(error.details["retry_after"])
    return response


def _is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


@login_required
@require_GET
def run_status(request: HttpRequest, conversation_id: int) -> HttpResponse:
    return _region(request, conversation_for_page(request, conversation_id))


@login_required
@require_POST
def run_cancel(request: HttpRequest, conversation_id: int, run_id: int) -> HttpResponse:
    return _act(request, conversation_id, run_id, services.run_cancel)


@login_required
@require_POST
def run_retry(request: HttpRequest, conversation_id: int, run_id: int) -> HttpResponse:
    # The stopped turn's messages leave every page, this one included, when its stream
    # brings `messages_superseded` (emitted before the retry's turn starts, so before any of
    # its messages): one path. (Out-of-band deletes here found no target when the stream
    # had removed them first, or when `run_started` had replaced the Retry form.)
    return _act(request, conversation_id, run_id, services.run_retry)


def _act(
    request: HttpRequest,
    conversation_id: int,
    run_id: int,
    action: Callable[..., Run],
) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    try:
        action(conversation=conversation, run_id=run_id)
    except ChatError as error:
        if error.status == 404:
            raise Http404() from None
        if not _is_htmx(request):
            page = HttpResponse(error.message, status=error.status, content_type="text/plain")
            if "retry_after" in error.details:
                page["Retry-After"] = str(error.details["retry_after"])
            return page
        return _region(request, conversation, error)
    if not _is_htmx(request):
        return redirect("chat:conversation", conversation_id=conversation.pk)
    return _region(request, conversation)

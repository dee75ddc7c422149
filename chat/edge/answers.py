"""The one edge responder of the answer path (issue 35): how every kind's answer view replies.

An answer view reads the POST, calls its kind's service (which ends in
`questionnaires.answering.answer_record`) and hands the outcome — the `ChatError` it
refused with, or None — to `answer_response`, which picks the reply for the client:

- the JSON API (a JSON body, views that speak it): 201 with the view's body, or the error;
- htmx: the view's fragment (the card again, with the error or locked), at the error's status;
- no JavaScript: post-redirect-get back to the conversation after an answer; after a
  refusal with nothing to fix (answered meanwhile, in another tab) a notice and the same
  redirect, so a reload never posts again; else the page again, the card showing the
  error and what the person typed, at the error's status.

An unknown card (404) is a 404 page whatever the client (except the JSON API's shape).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from chat.core.errors import ChatError
from chat.core.models import Conversation
from chat.edge.forms import MessageForm
from chat.edge.http import HtmxRequest, card_notice_add, error_response
from chat.edge.page import conversation_page
from questionnaires.registry import Refused

# A reply's template and its context (built only when that reply is the one sent).
Rendered = tuple[str, Mapping[str, object]]


@dataclass(frozen=True)
class Notice:
    """A refusal with nothing to fix (the card was answered meanwhile): the words shown on
    the card of `message_id` after the redirect."""

    message_id: int
    code: str
    text: str


def answer_response(
    request: HtmxRequest,
    *,
    conversation: Conversation,
    error: ChatError | None,
    fragment: Callable[[], Rendered],
    page: Callable[[], Rendered] | None = None,
    anchor: str = "",
    notice: Notice | None = None,
    json_api: bool = False,
    created: Callable[[], Mapping[str, object]] = dict,
) -> HttpResponse:
    """The reply to an answer (`error` None) or a refused one. `fragment`: what htmx gets;
    `page`: the no-JS page after a refusal (default: the conversation page); `anchor`: the
    element the no-JS redirect lands on; `notice`: the refusal needs no fix; `json_api`:
    the view also serves JSON requests, `created` the body of its 201."""
    if json_api and request.content_type == "application/json":
        return error_response(error) if error else JsonResponse(dict(created()), status=201)
    if error is not None and error.status == 404:
        raise Http404(error.message)
    if not request.htmx:
        if error is None:
            return conversation_redirect(conversation, anchor)
        if notice is not None:
            card_notice_add(
                request, message_id=notice.message_id, code=notice.code, text=notice.text
            )
            return conversation_redirect(conversation, f"msg-{notice.message_id}")
    template, context = fragment() if request.htmx else (page or _page(conversation, None))()
    return render(request, template, context, status=error.status if error else 200)


def refused_page(conversation: Conversation, refused: Refused | None) -> Callable[[], Rendered]:
    """The conversation page again, the refused card showing its error (no JavaScript)."""
    return _page(conversation, refused)


def _page(conversation: Conversation, refused: Refused | None) -> Callable[[], Rendered]:
    def page() -> Rendered:
        context = conversation_page(conversation=conversation, form=MessageForm(), refused=refused)
        return "chat/conversation.html", context

    return page


def conversation_redirect(conversation: Conversation, anchor: str = "") -> HttpResponse:
    url = reverse("chat:conversation", args=[conversation.pk])
    return redirect(f"{url}#{anchor}" if anchor else url)

"""The inbox page, its live count, answers given in place, answer links and the
notification settings (docs/inbox.md). Thin: one service or selector call each."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chat.core.errors import ChatError
from chat.core.models import NotifyMode
from chat.core.preferences import notify_mode, notify_set
from chat.edge.http import HtmxRequest, InvalidId, parse_id, signed_in
from chat.edge.page import sidebar
from chat.inbox import selectors, services
from chat.inbox.links import LinkRefused, answer_link_create, answer_link_use
from chat.inbox.models import AnswerLink
from questionnaires.registry import kinds


def _kind_choices() -> list[tuple[str, str]]:
    return [("", "")] + [(k.name, k.name) for k in kinds()]


class InboxFilter(forms.Form):
    c = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    k = forms.ChoiceField(required=False, choices=_kind_choices)


def _filters(data: QueryDict) -> tuple[int | None, str]:
    form = InboxFilter(data)
    if not form.is_valid():
        raise ChatError("inbox_filter_invalid", _("That filter is not one of the choices offered."))
    return form.cleaned_data["c"], form.cleaned_data["k"] or ""


def _list_context(
    request: HttpRequest, conversation_id: int | None, kind: str
) -> dict[str, object]:
    user = signed_in(request)
    conversations, kind_options = selectors.inbox_filters(user=user)
    query = urlencode({k: v for k, v in (("c", conversation_id or ""), ("k", kind)) if v})
    return {
        "items": selectors.inbox_items(user=user, conversation_id=conversation_id, kind=kind),
        "conversation_options": conversations,
        "kind_options": kind_options,
        "selected_conversation": str(conversation_id or ""),
        "selected_kind": kind,
        "filtered": bool(conversation_id or kind),
        "query": query,
        "poll_seconds": settings.INBOX_POLL_SECONDS,
    }


# htmx stops polling on this status: a poll whose session is gone must not swap the login
# page into the sidebar or the list (the next full page load goes to the login).
STOP_POLLING = 286


def _polling(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """`login_required`, except that an htmx poll of a signed-out tab stops polling."""
    guarded = login_required(view)

    @functools.wraps(view)
    def wrapper(request: HtmxRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.htmx and not request.user.is_authenticated:
            return HttpResponse(status=STOP_POLLING)
        return guarded(request, *args, **kwargs)

    return wrapper


@_polling
@require_GET
def inbox_page(request: HtmxRequest) -> HttpResponse:
    """Every question waiting for the person, newest first; `?c=` one conversation, `?k=`
    one kind. htmx polls `#list` (the live list)."""
    status = 200
    error: ChatError | None = None
    try:
        conversation_id, kind = _filters(request.GET)
    except ChatError as refused:
        conversation_id, kind, error, status = None, "", refused, refused.status
    context = _list_context(request, conversation_id, kind)
    context["filter_error"] = error
    if request.htmx and request.htmx.target == "inbox-list":
        return render(request, "chat/inbox.html#list", context, status=status)
    context["sidebar"] = sidebar(user=signed_in(request))
    return render(request, "chat/inbox.html", context, status=status)


@login_required
@require_POST
def inbox_answer(request: HtmxRequest) -> HttpResponse:
    """A short question answered in place (a click on one of its choices): through its
    kind's answer path; refusals (409 changed or gone, 400 bad choice) show on the item."""
    post = request.POST
    try:
        conversation_id, kind = _filters(post)
    except ChatError:
        conversation_id, kind = None, ""
    try:
        item, label = services.inbox_answer(
            user=signed_in(request),
            ref=post.get("ref", ""),
            choice=post.get("choice", ""),
            shown=post.get("shown", ""),
            lang=request.LANGUAGE_CODE,
        )
    except ChatError as refused:
        context = _list_context(request, conversation_id, kind)
        ref = post.get("ref", "")
        listed = any(i.ref == ref for i in context["items"])  # type: ignore[attr-defined]
        # On its item while it is listed; above the list once it is gone.
        context.update(refusal=refused, refused_ref=ref if listed else "")
        if request.htmx:
            return render(request, "chat/inbox.html#list", context, status=refused.status)
        context["sidebar"] = sidebar(user=signed_in(request))
        return render(request, "chat/inbox.html", context, status=refused.status)
    done = _("Answered “%(title)s”: %(answer)s") % {"title": item.title, "answer": label}
    if request.htmx:
        context = _list_context(request, conversation_id, kind)
        context["done"] = done
        return render(request, "chat/inbox.html#list", context)
    messages.success(request, done)
    query = urlencode({k: v for k, v in (("c", conversation_id or ""), ("k", kind)) if v})
    return redirect(reverse("chat:inbox") + (f"?{query}" if query else ""))


@_polling
@require_GET
def inbox_badge(request: HtmxRequest) -> HttpResponse:
    """The shell's live count, polled by every tab every INBOX_POLL_SECONDS: the tab says
    it is open (`?c=` the conversation it shows), and gets the count, and — when the person
    asked for notifications right away — the questions opened since `?after=` (a wait id)
    elsewhere than this tab, each with its own answer link, for a browser notification."""
    user = signed_in(request)
    try:
        current = parse_id(request.GET.get("c"), name="c", default=0)
        after = parse_id(request.GET.get("after"), name="after", default=0)
    except InvalidId as error:
        return HttpResponse(error.message, status=400, content_type="text/plain")
    services.presence_note(user=user, conversation_id=current or None)
    return render(request, "chat/inbox/_link.html", _badge(user, current, after))


def _badge(user: User, current: int, after: int | None) -> dict[str, object]:
    """The count, the newest wait id (the tab's next `after`) and the notices."""
    badge = selectors.inbox_badge(user=user)
    notices = []
    if after is not None and notify_mode(user_id=user.pk) == NotifyMode.IMMEDIATE:
        for wait, item in selectors.inbox_opened_after(user=user, after=after):
            if item.conversation_id == current or item.queued:
                continue  # this tab shows it; or it comes after one already notified
            link = answer_link_create(wait=wait, channel=AnswerLink.Channel.BROWSER)
            notices.append(
                {"tag": item.ref, "title": item.title, "body": item.conversation_title, "url": link}
            )
    return {
        "inbox": badge,
        "current_id": current,
        "notices": json.dumps(notices, ensure_ascii=False) if notices else "",
    }


@require_http_methods(["GET", "HEAD"])
def answer_link(request: HtmxRequest, token: str) -> HttpResponse:
    """A notification's answer link: after login if the session is gone (`next=` comes
    back here), spend it and go to its card; refused: a page with the code and why."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    try:
        item = answer_link_use(token=token, user=signed_in(request))
    except LinkRefused as refused:
        context = {"refusal": refused, "sidebar": sidebar(user=signed_in(request))}
        return render(request, "chat/inbox/link_refused.html", context, status=refused.status)
    return redirect(item.url)


class NotifyForm(forms.Form):
    notify = forms.ChoiceField(
        label=gettext_lazy("Tell me when a question waits for me"),
        choices=NotifyMode.choices,
        widget=forms.RadioSelect,
    )
    email = forms.EmailField(label=gettext_lazy("Email address"), required=False)


@login_required
@require_http_methods(["GET", "POST"])
def notify_settings(request: HtmxRequest) -> HttpResponse:
    """Notifications: off (the default), a digest, or right away; the address; a button
    that asks the browser for permission to show notifications (never asked on load)."""
    user = signed_in(request)
    initial = {"notify": notify_mode(user_id=user.pk), "email": user.email}
    form = NotifyForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            notify_set(user, mode=form.cleaned_data["notify"], email=form.cleaned_data["email"])
            messages.success(request, _("Your notification settings are saved."))
            return redirect("chat:notify_settings")
        status = 400
    context = {"form": form, "sidebar": sidebar(user=user)}
    return render(request, "chat/inbox/settings.html", context, status=status)

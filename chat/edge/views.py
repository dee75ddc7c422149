"""Pages and htmx fragments. Thin: a form, one service or selector call, a template."""

from __future__ import annotations

import functools
from contextlib import suppress

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db import transaction
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    QueryDict,
)
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from chat import usecases
from chat.core import services
from chat.core.errors import ChatError, NotFound
from chat.core.models import Conversation
from chat.edge.forms import ConversationCreateForm, ConversationRenameForm, MessageForm
from chat.edge.health import health_report
from chat.edge.home import home_agents
from chat.edge.http import (
    HtmxRequest,
    InvalidId,
    card_notice_pop,
    conversation_for_page,
    error_response,
    parse_id,
    signed_in,
)
from chat.edge.page import (
    conversation_page,
    message_items,
    message_items_changed,
    refusal_current,
    refusal_view,
    shell_update,
    sidebar,
)
from chat.edge.sse import StreamBusy, StreamRefused, last_event_id, stream_open
from chat.edge.stream_selectors import stream_access_for_session
from questionnaires import drafts
from questionnaires.repair.services import typed_reply as repair_typed_reply


def _home(request: HtmxRequest, form: ConversationCreateForm, status: int = 200) -> HttpResponse:
    user = signed_in(request)
    context = {
        "form": form,
        "agents": home_agents(user=user),
        "sidebar": sidebar(user=user, query=request.GET.get("q", "")),
    }
    return render(request, "chat/conversation_list.html", context, status=status)


def _create_form(data: QueryDict | None = None) -> ConversationCreateForm:
    choices = usecases.intake_choices(translation.get_language() or "en")
    tours = tuple((name, str(title)) for name, title in usecases.TOUR_SCRIPTS.items())
    return ConversationCreateForm(data, intake_choices=choices, script_choices=tours)


@login_required
@require_GET
def conversation_list(request: HtmxRequest) -> HttpResponse:
    """The home page: a composer to start a conversation; the sidebar lists (and, with
    ?q=, searches) conversations."""
    return _home(request, _create_form())


@login_required
@require_POST
def conversation_create(request: HtmxRequest) -> HttpResponse:
    """The home composer's first send: the conversation and its first message (or its
    agent's opening) in one step, then its page."""
    form = _create_form(request.POST)
    if not form.is_valid():
        too_long = form.has_error("content", "message_too_long")
        return _home(request, form, status=413 if too_long else 400)
    data = form.cleaned_data
    try:
        conversation = usecases.conversation_start(
            owner=signed_in(request),
            agent=data["agent"],
            language=request.LANGUAGE_CODE,
            content=data["content"],
            title=data["title"],
            definition_id=data.get("intake", ""),
            script=data.get("script", ""),
        )
    except ChatError as error:
        form.add_error("intake" if error.code == "intake_unknown" else "content", error.message)
        return _home(request, form, status=error.status)
    return redirect("chat:conversation", conversation_id=conversation.pk)


@login_required
@require_GET
def conversation_detail(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    context = conversation_page(conversation=conversation, form=MessageForm())
    context["notice"] = card_notice_pop(request)  # a refused card post, redirected here
    return render(request, "chat/conversation.html", context)


@login_required
@require_GET
def conversation_shell(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    """After a message (`message_done`): the title, the sidebar and a side panel that
    appeared, as out-of-band swaps; `?panel=1` says this tab already shows the panel,
    `?q=` keeps the sidebar's search."""
    conversation = conversation_for_page(request, conversation_id)
    context = shell_update(
        conversation=conversation,
        had_panel=request.GET.get("panel") == "1",
        query=request.GET.get("q", ""),
    )
    return render(request, "chat/_shell_update.html", context)


@login_required
@require_POST
def message_send(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    conversation = conversation_for_page(request, conversation_id)
    form = MessageForm(request.POST)
    status = 200
    refusal = None  # a text refused while a card waits: that kind's way out (submit / cancel)
    repaired = False
    if form.is_valid():
        try:
            # One transaction: a connection lost after it committed leaves no half-done
            # work for chat.core.dbfaults to refuse to repeat.
            with transaction.atomic():
                content = form.cleaned_data["content"]
                # Conversation repair (issue 36): words that answer a waiting question
                # answer or fill it; anything else is posted as usual.
                repair_typed_reply(
                    conversation=conversation,
                    content=content,
                    user=signed_in(request),
                    lang=getattr(request, "LANGUAGE_CODE", conversation.language),
                    post=lambda: usecases.message_post_user(
                        conversation=conversation, content=content
                    ),
                )
                services.conversation_name_from(
                    conversation=conversation, text=form.cleaned_data["content"]
                )
        except ChatError as error:
            form.add_error("content", error.message)
            status = error.status
            refusal = refusal_view(error)
        else:
            if not request.htmx:
                return redirect("chat:conversation", conversation_id=conversation.pk)
            form = MessageForm()
            repaired = True
    else:  # too long is 413, as documented (and as the API answers)
        status = 413 if form.has_error("content", "message_too_long") else 400
    if not request.htmx:
        context = conversation_page(conversation=conversation, form=form, refusal=refusal)
        return render(request, "chat/conversation.html", context, status=status)
    # htmx: the composer comes back (cleared, or with the error and the typed text kept);
    # the new message itself arrives through the event stream like in every other tab.
    context = {"conversation": conversation, "form": form, "refusal": refusal}
    response = render(request, "chat/conversation.html#composer", context, status=status)
    if repaired:  # the repair prompt below the thread may have changed
        response["HX-Trigger"] = "qc:repair"
    return response


@login_required
@require_GET
def composer_refusal(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    """The composer's refusal region as it stands now (an open tab asks on card and run
    events): the waiting card's way out, or nothing once the card was answered or
    cancelled, here or in another tab. The text typed in the composer is not touched."""
    conversation = conversation_for_page(request, conversation_id)
    context = {"conversation": conversation, "refusal": refusal_current(conversation=conversation)}
    return render(request, "chat/conversation.html#composer-refusal", context)


@login_required
@require_GET
def conversation_search(request: HtmxRequest) -> HttpResponse:
    """The sidebar's list for `?q=` (titles and message text), as you type (htmx); the
    conversation `?current=` stays marked. Without JavaScript the home page takes `?q=`."""
    return _sidebar_nav(request)


def _sidebar_nav(request: HtmxRequest, *, title_of: Conversation | None = None) -> HttpResponse:
    """The sidebar's list (and, when `title_of` is the open conversation, its new title
    out of band)."""
    current = request.GET.get("current") or request.POST.get("current") or ""
    current_id = parse_id(current, name="current", default=0) or None
    context = {
        "sidebar": sidebar(
            user=signed_in(request),
            current_id=current_id,
            query=request.GET.get("q") or request.POST.get("q") or "",
        ),
        "page_url": request.POST.get("next") or reverse("chat:conversation_list"),
        "renamed": title_of,
        "title_oob": title_of is not None and title_of.pk == current_id,
    }
    return render(request, "chat/_sidebar_nav.html", context)


@login_required
@require_POST
def conversation_rename(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    """Rename (htmx: the sidebar's list comes back, and the open conversation's title)."""
    conversation = conversation_for_page(request, conversation_id)
    form = ConversationRenameForm(request.POST)
    if form.is_valid():
        with suppress(ChatError):  # a blank name keeps the old one
            services.conversation_rename(
                conversation=conversation, title=form.cleaned_data["title"]
            )
    if request.htmx:
        return _sidebar_nav(request, title_of=conversation)
    return redirect(_next(request, reverse("chat:conversation", args=[conversation.pk])))


@login_required
@require_POST
def conversation_delete(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    """Delete one of the user's own conversations (anyone else's is a 404). htmx: the
    sidebar's list comes back — or, when it was the open one, the browser goes home."""
    conversation = conversation_for_page(request, conversation_id)
    gone = reverse("chat:conversation", args=[conversation.pk])
    services.conversation_delete(conversation=conversation)
    target = _next(request, reverse("chat:conversation_list"))
    if request.htmx:
        if target.startswith(gone):
            return HttpResponseClientRedirect(reverse("chat:conversation_list"))
        return _sidebar_nav(request)
    return redirect(reverse("chat:conversation_list") if target.startswith(gone) else target)


def _next(request: HtmxRequest, default: str) -> str:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


@login_required
@require_GET
def message_list_fragment(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    """Messages after `?after=SEQ`, as HTML: what a live tab appends on `message_done`."""
    conversation = conversation_for_page(request, conversation_id)
    after = parse_id(request.GET.get("after"), name="after", default=0)
    live = live_cards(request.GET.get("live", ""))
    items = message_items(conversation=conversation, after_seq=after)
    # Cards this tab still shows as answerable/pending come back out of band if they changed.
    items += message_items_changed(conversation=conversation, live=live)
    return render(request, "chat/conversation.html#message-list", {"items": items})


@login_required
@require_POST
def draft_save(request: HtmxRequest, conversation_id: int) -> HttpResponse:
    """An open card's fields, posted as the person types (static/js/drafts.js, debounced):
    204, or the refusal's message with its status and code (`X-Error-Code`)."""
    conversation = conversation_for_page(request, conversation_id)
    try:
        drafts.draft_save(
            user_id=signed_in(request).pk,
            conversation=conversation,
            card=request.POST.get("card_key", ""),
            pairs=request.POST.lists(),
        )
    except ChatError as error:
        return HttpResponse(
            error.message,
            status=error.status,
            content_type="text/plain; charset=utf-8",
            headers={"X-Error-Code": error.code},
        )
    return HttpResponse(status=204)


@require_http_methods(["GET"])
async def conversation_events(request: HtmxRequest, conversation_id: int) -> HttpResponseBase:
    try:
        last = last_event_id(request)
    except InvalidId as error:
        return HttpResponse(error.message, status=400, content_type="text/plain; charset=utf-8")
    access = functools.partial(
        stream_access_for_session, request=request, conversation_id=conversation_id
    )
    try:
        return await stream_open(
            conversation_id=conversation_id, last_event_id=last, authorize=access
        )
    except StreamRefused as refused:  # not logged in, or not theirs
        return HttpResponse(status=401 if refused.code == "unauthorized" else 404)
    except StreamBusy as error:
        return HttpResponse(
            error.message,
            status=error.status,
            headers={"Retry-After": str(error.retry_after)},
            content_type="text/plain; charset=utf-8",
        )


def live_cards(value: str) -> dict[int, str]:
    """`?live=<message id>:<card state>,…` (the cards a tab still shows as live), at most
    50; an id that isn't one is `InvalidId`."""
    parts = [part.partition(":") for part in value.split(",")[:50] if part]
    return {parse_id(pk, name="live"): state for pk, _sep, state in parts}


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 400 handler: a `ChatError` (e.g. `invalid_id` from a URL) keeps its code —
    as JSON on the API and `/mcp/`, as text elsewhere."""
    error = exception if isinstance(exception, ChatError) else None
    if error is None:
        error = ChatError("bad_request", _("The request could not be understood."))
    if request.path_info.startswith(("/api/", "/mcp")):
        return error_response(error)
    return HttpResponse(error.message, status=400, content_type="text/plain; charset=utf-8")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 404 handler: JSON on the API and `/mcp/`; elsewhere the app's own page —
    inside the app shell, with the sidebar, for a signed-in person."""
    if request.path_info.startswith(("/api/", "/mcp")):
        return error_response(NotFound(_("Not found.")))
    context: dict[str, object] = {}
    user = getattr(request, "user", None)
    if isinstance(user, User) and user.is_authenticated:
        context = {"base_template": "_app.html", "sidebar": sidebar(user=user)}
    return render(request, "404.html", context, status=404)


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico by themselves: the static file (whose name may carry
    a content hash, so the redirect isn't permanent)."""
    return redirect(static("img/favicon.ico"))


@require_GET
def livez(request: HtmxRequest) -> HttpResponse:
    """Liveness: the process answers (no dependencies touched)."""
    return HttpResponse("ok", content_type="text/plain")


@require_GET
def healthz(request: HtmxRequest) -> JsonResponse:
    """Liveness for load balancers: the database and the channel layer answer."""
    report = health_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)

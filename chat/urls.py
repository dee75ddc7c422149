"""The project's URLs: the chat's own pages and API, then every registered kind's
(`questionnaires.registry`: a kind names a module with `urlpatterns` and, optionally,
`api_router`, its JSON API operations), so a new way of asking needs no line here."""

from __future__ import annotations

from importlib import import_module

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path
from ninja import Router

from chat.core.version import product_version
from chat.edge import agui, api, inbox, metrics, preferences, run_identity_api, runs, views
from chat.edge.apibase import api_build
from chat.skills import api as skills_api
from questionnaires.registry import kinds


def kind_patterns(attribute: str) -> list[URLPattern | URLResolver]:
    """Every registered kind's `urlpatterns`, in registry order."""
    found: list[URLPattern | URLResolver] = []
    for kind in kinds():
        if kind.urls:
            found.extend(getattr(import_module(kind.urls), attribute, ()))
    return found


def kind_routers() -> list[Router]:
    """Every registered kind's JSON API operations (`api_router`), in registry order."""
    found: list[Router] = []
    for kind in kinds():
        router = getattr(import_module(kind.urls), "api_router", None) if kind.urls else None
        if router is not None:
            found.append(router)
    return found


def chat_patterns() -> list[URLPattern | URLResolver]:
    return [
        path("", views.conversation_list, name="conversation_list"),
        path("conversations/new", views.conversation_create, name="conversation_create"),
        path("conversations/search", views.conversation_search, name="conversation_search"),
        path("conversations/<id:conversation_id>/", views.conversation_detail, name="conversation"),
        path(
            "conversations/<id:conversation_id>/shell",
            views.conversation_shell,
            name="conversation_shell",
        ),
        path(
            "conversations/<id:conversation_id>/rename",
            views.conversation_rename,
            name="conversation_rename",
        ),
        path(
            "conversations/<id:conversation_id>/delete",
            views.conversation_delete,
            name="conversation_delete",
        ),
        path(
            "conversations/<id:conversation_id>/messages", views.message_send, name="message_send"
        ),
        path(
            "conversations/<id:conversation_id>/composer/refusal",
            views.composer_refusal,
            name="composer_refusal",
        ),
        path(
            "conversations/<id:conversation_id>/fragment",
            views.message_list_fragment,
            name="message_list",
        ),
        path("conversations/<id:conversation_id>/events", views.conversation_events, name="events"),
        path("conversations/<id:conversation_id>/drafts", views.draft_save, name="draft_save"),
        path("conversations/<id:conversation_id>/run", runs.run_status, name="run_status"),
        path("inbox/", inbox.inbox_page, name="inbox"),
        path("inbox/count", inbox.inbox_badge, name="inbox_badge"),
        path("inbox/answer", inbox.inbox_answer, name="inbox_answer"),
        path("inbox/a/<str:token>/", inbox.answer_link, name="answer_link"),
        path("settings/notifications", inbox.notify_settings, name="notify_settings"),
        path(
            "settings/developer-details",
            preferences.developer_details_toggle,
            name="developer_details",
        ),
        path(
            "conversations/<id:conversation_id>/runs/<id:run_id>/cancel",
            runs.run_cancel,
            name="run_cancel",
        ),
        path(
            "conversations/<id:conversation_id>/runs/<id:run_id>/retry",
            runs.run_retry,
            name="run_retry",
        ),
        *kind_patterns("urlpatterns"),
        *import_module("questionnaires.repair.urls").urlpatterns,  # issue 36
    ]


def api_patterns() -> list[URLPattern | URLResolver]:
    """The JSON API (django-ninja): the chat's operations, skills, then every kind's; its
    OpenAPI document at `openapi.json` and the docs page at `docs`."""
    routers = [api.router, run_identity_api.router, skills_api.router, *kind_routers()]
    patterns, _app, _namespace = api_build(routers, version=product_version()).urls
    return patterns


def project_patterns() -> list[URLPattern | URLResolver]:
    """Everything, as `urlpatterns` below (a test that registers a kind builds it again)."""
    return [
        path("", include((chat_patterns(), "chat"))),
        # AG-UI (chat/edge/agui.py): an event stream, beside the ninja API it shares auth with.
        path("api/v1/conversations/<id:conversation_id>/agui", agui.agui_run, name="agui_run"),
        path("api/v1/", include((api_patterns(), "api"))),
        path("questionnaires/", include("questionnaires.inline.playground_urls")),
        path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
        path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
        path("i18n/", include("django.conf.urls.i18n")),
        path("admin/", admin.site.urls),
        path("healthz", views.healthz, name="healthz"),
        # Browsers ask for /favicon.ico by themselves (pages link the SVG and the .ico).
        path("favicon.ico", views.favicon, name="favicon"),
        path("livez", views.livez, name="livez"),
        path("metrics", metrics.metrics_view, name="metrics"),
    ]


# A URL id the database can't hold (`chat.edge.http.InvalidId`) and other bad requests.
handler400 = "chat.edge.views.bad_request"
# Not found: the app's own page (JSON on the API). Server errors: Django's handler with
# templates/500.html, which needs no session or database.
handler404 = "chat.edge.views.not_found"

urlpatterns = project_patterns()

"""The project's URLs: the chat's own pages and API, then every registered kind's
(`questionnaires.registry`: a kind names a module with `urlpatterns` and, optionally,
`api_urlpatterns`), so a new way of asking needs no line here."""

from __future__ import annotations

from importlib import import_module

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path

from chat.edge import api, preferences, run_identity_api, runs, views
from chat.skills import api as skills_api
from questionnaires.registry import kinds


def kind_patterns(attribute: str) -> list[URLPattern | URLResolver]:
    """Every registered kind's `urlpatterns` or `api_urlpatterns`, in registry order."""
    found: list[URLPattern | URLResolver] = []
    for kind in kinds():
        if kind.urls:
            found.extend(getattr(import_module(kind.urls), attribute, ()))
    return found


def chat_patterns() -> list[URLPattern | URLResolver]:
    return [
        path("", views.conversation_list, name="conversation_list"),
        path("conversations/new", views.conversation_create, name="conversation_create"),
        path("conversations/<id:conversation_id>/", views.conversation_detail, name="conversation"),
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
            "conversations/<id:conversation_id>/fragment",
            views.message_list_fragment,
            name="message_list",
        ),
        path("conversations/<id:conversation_id>/events", views.conversation_events, name="events"),
        path("conversations/<id:conversation_id>/drafts", views.draft_save, name="draft_save"),
        path("conversations/<id:conversation_id>/run", runs.run_status, name="run_status"),
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
    ]


def api_patterns() -> list[URLPattern | URLResolver]:
    return [
        path("conversations/", api.conversations, name="conversations"),
        path("conversations/<id:conversation_id>/messages", api.messages, name="messages"),
        path("conversations/<id:conversation_id>/events", api.events, name="events"),
        path("conversations/<id:conversation_id>/runs", run_identity_api.run_open, name="run_open"),
        path(
            "conversations/<id:conversation_id>/runs/<id:run_id>/cancel",
            run_identity_api.run_cancel,
            name="run_cancel_api",
        ),
        path("kinds/skills", skills_api.skill_list, name="skills"),
        path("kinds/skills/upload", skills_api.skill_upload, name="skill_upload"),
        path("kinds/skills/<id:skill_id>", skills_api.skill_update, name="skill_update"),
        *kind_patterns("api_urlpatterns"),
    ]


def project_patterns() -> list[URLPattern | URLResolver]:
    """Everything, as `urlpatterns` below (a test that registers a kind builds it again)."""
    return [
        path("", include((chat_patterns(), "chat"))),
        path("api/v1/", include((api_patterns(), "api"))),
        path("questionnaires/", include("questionnaires.urls")),
        path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
        path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
        path("i18n/", include("django.conf.urls.i18n")),
        path("admin/", admin.site.urls),
        path("healthz", views.healthz, name="healthz"),
        path("livez", views.livez, name="livez"),
    ]


# A URL id the database can't hold (`chat.edge.http.InvalidId`) and other bad requests.
handler400 = "chat.edge.views.bad_request"

urlpatterns = project_patterns()

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from chat.edge import api, run_identity_api, views
from chat.skills import api as skills_api
from questionnaires import drafts
from questionnaires.asks import urls as structured_urls
from questionnaires.elicitations import urls as elicitation_urls
from questionnaires.forms import views as interactive_form_views
from questionnaires.inline import views as questionnaire_views

chat_patterns = [
    path("", views.conversation_list, name="conversation_list"),
    path("conversations/new", views.conversation_create, name="conversation_create"),
    path("conversations/<int:conversation_id>/", views.conversation_detail, name="conversation"),
    path(
        "conversations/<int:conversation_id>/rename",
        views.conversation_rename,
        name="conversation_rename",
    ),
    path(
        "conversations/<int:conversation_id>/delete",
        views.conversation_delete,
        name="conversation_delete",
    ),
    path(
        "conversations/<int:conversation_id>/messages",
        views.message_send,
        name="message_send",
    ),
    path(
        "conversations/<int:conversation_id>/fragment",
        views.message_list_fragment,
        name="message_list",
    ),
    path(
        "conversations/<int:conversation_id>/events",
        views.conversation_events,
        name="events",
    ),
    path("", include("chat.runs.urls")),
    path(
        "conversations/<int:conversation_id>/messages/<int:message_id>/answer",
        questionnaire_views.questionnaire_submit_view,
        name="questionnaire_submit",
    ),
    path("", include(structured_urls.page_patterns)),
    path("", include(elicitation_urls.page_patterns)),
    path(
        "conversations/<int:conversation_id>/forms/answer",
        interactive_form_views.interactive_form_answer,
        name="interactive_form_answer",
    ),
    path(
        "conversations/<int:conversation_id>/drafts",
        drafts.draft_save_view,
        name="draft_save",
    ),
    path(
        "conversations/<int:conversation_id>/forms/cancel-and-send",
        interactive_form_views.interactive_form_cancel_and_send,
        name="interactive_form_cancel_send",
    ),
]

api_patterns = [
    path("conversations/", api.conversations, name="conversations"),
    path("conversations/<int:conversation_id>/messages", api.messages, name="messages"),
    path("conversations/<int:conversation_id>/events", api.events, name="events"),
    path("", include(structured_urls.api_patterns)),
    path("conversations/<int:conversation_id>/runs", run_identity_api.run_open, name="run_open"),
    path(
        "conversations/<int:conversation_id>/runs/<int:run_id>/cancel",
        run_identity_api.run_cancel,
        name="run_cancel_api",
    ),
    path("kinds/skills", skills_api.skill_list, name="skills"),
    path("kinds/skills/upload", skills_api.skill_upload, name="skill_upload"),
    path("kinds/skills/<int:skill_id>", skills_api.skill_update, name="skill_update"),
]

urlpatterns = [
    path("", include((chat_patterns, "chat"))),
    path("api/v1/", include((api_patterns, "api"))),
    path("questionnaires/", include("questionnaires.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("healthz", views.healthz, name="healthz"),
    path("livez", views.livez, name="livez"),
]

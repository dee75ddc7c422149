"""URL patterns of asks and the state panel (chat/urls.py includes every kind's)."""

from __future__ import annotations

from django.urls import path

from questionnaires.asks import api, views

urlpatterns = [
    path(
        "conversations/<id:conversation_id>/asks/<id:message_id>",
        views.ask_fragment_view,
        name="ask",
    ),
    path(
        "conversations/<id:conversation_id>/asks/<id:message_id>/answer",
        views.ask_answer_view,
        name="ask_answer",
    ),
    path(
        "conversations/<id:conversation_id>/asks/<id:message_id>/change",
        views.ask_change_view,
        name="ask_change",
    ),
    path("conversations/<id:conversation_id>/state", views.state_fragment_view, name="state"),
    path(
        "conversations/<id:conversation_id>/state/<str:field>",
        views.slot_edit_view,
        name="slot_edit",
    ),
]

# The kind's JSON API operations (chat/urls.py mounts every kind's on the one API).
api_router = api.router

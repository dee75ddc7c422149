"""URL patterns of asks and the state panel (chat/urls.py includes every kind's)."""

from __future__ import annotations

from django.urls import path

from questionnaires.asks import api, views

urlpatterns = [
    path(
        "conversations/<int:conversation_id>/asks/<int:message_id>",
        views.ask_fragment_view,
        name="ask",
    ),
    path(
        "conversations/<int:conversation_id>/asks/<int:message_id>/answer",
        views.ask_answer_view,
        name="ask_answer",
    ),
    path("conversations/<int:conversation_id>/state", views.state_fragment_view, name="state"),
    path(
        "conversations/<int:conversation_id>/state/<str:field>",
        views.slot_edit_view,
        name="slot_edit",
    ),
]

api_urlpatterns = [
    path("conversations/<int:conversation_id>/answers", api.answers_view, name="answers"),
    path("conversations/<int:conversation_id>/asks", api.asks_view, name="asks"),
]

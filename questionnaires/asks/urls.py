"""URL patterns for asks and the state panel; included by chat/urls.py."""

from __future__ import annotations

from django.urls import path

from questionnaires.asks import api, views

page_patterns = [
    path(
        "conversations/<id:conversation_id>/asks/<id:message_id>",
        views.ask_fragment,
        name="ask",
    ),
    path(
        "conversations/<id:conversation_id>/asks/<id:message_id>/answer",
        views.ask_answer,
        name="ask_answer",
    ),
    path("conversations/<id:conversation_id>/state", views.state_fragment, name="state"),
    path(
        "conversations/<id:conversation_id>/state/<str:field>",
        views.slot_edit,
        name="slot_edit",
    ),
]

api_patterns = [
    path("conversations/<id:conversation_id>/answers", views.api_answers, name="answers"),
    path("conversations/<id:conversation_id>/asks", api.api_asks, name="asks"),
]

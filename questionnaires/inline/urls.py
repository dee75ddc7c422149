"""URL patterns of inline cards (chat/urls.py includes every kind's)."""

from __future__ import annotations

from django.urls import path

from questionnaires.inline import views

urlpatterns = [
    path(
        "conversations/<id:conversation_id>/messages/<id:message_id>/answer",
        views.questionnaire_submit_view,
        name="questionnaire_submit",
    ),
    path(
        "conversations/<id:conversation_id>/messages/<id:message_id>/answer/change",
        views.questionnaire_change_view,
        name="questionnaire_change",
    ),
]

"""URL patterns of inline cards (chat/urls.py includes every kind's)."""

from __future__ import annotations

from django.urls import path

from questionnaires.inline import views

urlpatterns = [
    path(
        "conversations/<int:conversation_id>/messages/<int:message_id>/answer",
        views.questionnaire_submit_view,
        name="questionnaire_submit",
    ),
]

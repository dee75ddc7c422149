"""URL patterns of elicitation cards (chat/urls.py includes every kind's)."""

from __future__ import annotations

from django.urls import path

from questionnaires.elicitations import views

urlpatterns = [
    path(
        "conversations/<int:conversation_id>/elicitations/<int:elicitation_id>",
        views.elicitation_answer_view,
        name="elicitation_answer",
    ),
]

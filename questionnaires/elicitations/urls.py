"""URL patterns for elicitation cards; included by chat/urls.py."""

from __future__ import annotations

from django.urls import path

from questionnaires.elicitations import views

page_patterns = [
    path(
        "conversations/<id:conversation_id>/elicitations/<id:elicitation_id>",
        views.elicitation_answer_view,
        name="elicitation_answer",
    ),
]

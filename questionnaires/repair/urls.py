"""URL patterns of the repair prompt (chat/urls.py includes them in the "chat" namespace)."""

from __future__ import annotations

from django.urls import path

from questionnaires.repair import views

urlpatterns = [
    path(
        "conversations/<id:conversation_id>/repair",
        views.repair_region,
        name="repair_region",
    ),
    path(
        "conversations/<id:conversation_id>/repair/<id:repair_id>",
        views.repair_answer,
        name="repair_answer",
    ),
]

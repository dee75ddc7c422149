"""URL patterns of deferred forms (chat/urls.py includes every kind's)."""

from __future__ import annotations

from django.urls import path

from questionnaires.forms import views

urlpatterns = [
    path(
        "conversations/<id:conversation_id>/forms/answer",
        views.interactive_form_answer_view,
        name="interactive_form_answer",
    ),
    path(
        "conversations/<id:conversation_id>/forms/cancel-and-send",
        views.interactive_form_cancel_and_send_view,
        name="interactive_form_cancel_send",
    ),
    path(
        "conversations/<id:conversation_id>/forms/<str:ask_id>/change",
        views.interactive_form_change_view,
        name="interactive_form_change",
    ),
]

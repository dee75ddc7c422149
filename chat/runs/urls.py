from __future__ import annotations

from django.urls import path

from chat.runs import views

urlpatterns = [
    path("conversations/<id:conversation_id>/run", views.run_status, name="run_status"),
    path(
        "conversations/<id:conversation_id>/runs/<id:run_id>/cancel",
        views.run_cancel,
        name="run_cancel",
    ),
    path(
        "conversations/<id:conversation_id>/runs/<id:run_id>/retry",
        views.run_retry,
        name="run_retry",
    ),
]

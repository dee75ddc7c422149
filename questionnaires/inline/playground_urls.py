"""The protocol playground's URL (the inline kind's page for trying questionnaire blocks,
outside any conversation; namespace "questionnaires", mounted by chat/urls.py)."""

from __future__ import annotations

from django.urls import path

from questionnaires.inline import playground_views as views

app_name = "questionnaires"

urlpatterns = [
    path("playground/", views.playground, name="playground"),
]

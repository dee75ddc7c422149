from __future__ import annotations

from django.urls import path

from questionnaires.inline import playground_views as views

app_name = "questionnaires"

urlpatterns = [
    path("playground/", views.playground, name="playground"),
]

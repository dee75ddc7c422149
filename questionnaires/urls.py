from __future__ import annotations

from django.urls import path

from questionnaires import views

app_name = "questionnaires"

urlpatterns = [
    path("playground/", views.playground, name="playground"),
]

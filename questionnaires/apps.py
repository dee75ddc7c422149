from __future__ import annotations

from django.apps import AppConfig


class QuestionnairesConfig(AppConfig):
    name = "questionnaires"
    verbose_name = "Questionnaires"

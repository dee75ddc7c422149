from __future__ import annotations

from django.apps import AppConfig


class QuestionnairesConfig(AppConfig):
    """The asking app: one subpackage per way of asking (inline, forms, asks)."""

    name = "questionnaires"
    verbose_name = "Questionnaires"

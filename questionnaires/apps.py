from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_save


class QuestionnairesConfig(AppConfig):
    name = "questionnaires"
    verbose_name = "Questionnaires"

    def ready(self) -> None:
        from questionnaires.forms_service import form_attach_to_message

        # A lazy sender reference: `questionnaires` never imports `chat`.
        post_save.connect(
            form_attach_to_message, sender="chat.Message", dispatch_uid="interactive_form_attach"
        )

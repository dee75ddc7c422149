from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from chat.core.models import AgentKind
from questionnaires.asks.definitions import definition_ids


class ConversationCreateForm(forms.Form):
    title = forms.CharField(label=_("Title"), max_length=200, required=False)
    agent = forms.ChoiceField(label=_("Agent"), choices=AgentKind.choices)
    # Which intake definition an intake conversation collects (ignored for other agents).
    intake = forms.ChoiceField(label=_("Intake"), required=False)

    def __init__(self, *args, **kwargs) -> None:

        super().__init__(*args, **kwargs)
        self.fields["agent"].initial = settings.CHAT_DEFAULT_AGENT
        choices = definition_ids()
        self.fields["intake"].choices = [("", _("Ask me in the chat")), *choices]
        self.fields["intake"].initial = choices[0][0] if choices else ""

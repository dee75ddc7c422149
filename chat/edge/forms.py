from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from chat.core.models import AgentKind
from questionnaires.asks.definitions import definition_ids, definitions_all
from questionnaires.conversation import llm_configured


class ConversationCreateForm(forms.Form):
    title = forms.CharField(label=_("Title"), max_length=200, required=False)
    agent = forms.ChoiceField(label=_("Agent"), choices=AgentKind.choices)
    # Which intake definition an intake conversation collects (ignored for other agents).
    intake = forms.ChoiceField(label=_("Intake"), required=False)

    def __init__(self, *args, **kwargs) -> None:
        def definition_titles(language: str) -> list[tuple[str, str]]:
            """(id, title), titled in the page's language when a definition has it."""
            lang = "zh-hans" if language.lower().startswith("zh") else "en"
            own = {d.id: d.title for d in definitions_all().values() if d.language == lang}
            return [(key, own.get(key, title)) for key, title in definition_ids()]

        super().__init__(*args, **kwargs)
        self.fields["agent"].initial = settings.CHAT_DEFAULT_AGENT
        choices = definition_titles(get_language() or "en")
        self.fields["intake"].choices = [("", _("Ask me in the chat")), *choices]
        self.fields["intake"].initial = choices[0][0] if choices else ""

    def clean_agent(self) -> str:
        agent = self.cleaned_data["agent"]
        if agent == AgentKind.OPENAI and not llm_configured():
            raise forms.ValidationError(
                _("No model endpoint is configured on this server, so this agent can’t answer."),
                code="llm_not_configured",
            )
        return agent


class ConversationRenameForm(forms.Form):
    title = forms.CharField(label=_("Name"), max_length=200)

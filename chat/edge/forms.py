"""The chat pages' forms; every view that shows the composer validates text with `MessageForm`."""

from __future__ import annotations

from typing import cast

from django import forms
from django.conf import settings
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from chat.core.agents import AgentUnknown, agent_choices, agent_named


class ConversationCreateForm(forms.Form):
    """The home page's composer: the first message (optional for an agent that opens the
    conversation itself), the assistant and, for the intake, its topic. `title` names a
    conversation without a message (scripts and tests; the page doesn't ask for it)."""

    content = forms.CharField(
        label=_("Message"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 2, "autocomplete": "off"}),
    )
    agent = forms.ChoiceField(label=_("Assistant"), choices=agent_choices)  # the registry's
    # Which intake definition an intake conversation collects (ignored for other agents).
    intake = forms.ChoiceField(label=_("Topic"), required=False)
    # Which of the scripted agent's tours (empty: the protocol tour).
    script = forms.ChoiceField(label=_("Tour"), required=False)
    title = forms.CharField(label=_("Title"), max_length=200, required=False)

    def __init__(
        self,
        data: QueryDict | None = None,
        *,
        intake_choices: list[tuple[str, str]],
        script_choices: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """`intake_choices`: (id, title) of the intake definitions to offer;
        `script_choices`: (name, title) of the tours besides the protocol tour."""
        super().__init__(data)
        self.fields["agent"].initial = settings.CHAT_DEFAULT_AGENT
        intake = cast(forms.ChoiceField, self.fields["intake"])
        intake.choices = [*intake_choices, ("", _("Ask me in the chat"))]
        intake.initial = intake_choices[0][0] if intake_choices else ""
        script = cast(forms.ChoiceField, self.fields["script"])
        script.choices = [("", ""), *script_choices]

    def clean_content(self) -> str:
        return _within_limit(str(self.cleaned_data["content"]))

    def clean_agent(self) -> str:
        name = str(self.cleaned_data["agent"])
        try:
            agent = agent_named(name)
        except AgentUnknown as error:
            raise forms.ValidationError(error.message, code=error.code) from error
        if not agent.ready():
            raise forms.ValidationError(
                _("This assistant isn’t available on this server yet. Choose another one."),
                code=agent.unavailable_code,
            )
        return name


class ConversationRenameForm(forms.Form):
    title = forms.CharField(label=_("Name"), max_length=200)


class MessageForm(forms.Form):
    content = forms.CharField(
        label=_("Message"),
        strip=False,
        widget=forms.Textarea(attrs={"rows": 2, "autocomplete": "off"}),
        error_messages={"required": _("Type a message first.")},
    )

    def clean_content(self) -> str:
        content = str(self.cleaned_data["content"])
        if not content.strip():
            raise forms.ValidationError(_("Type a message first."), code="message_empty")
        return _within_limit(content)


def _within_limit(content: str) -> str:
    """A message's text, or `message_too_long` past CHAT_MAX_MESSAGE_CHARS."""
    limit = settings.CHAT_MAX_MESSAGE_CHARS
    if len(content) > limit:
        raise forms.ValidationError(
            _("The message is %(n)s characters long; the limit is %(limit)s."),
            code="message_too_long",
            params={"n": len(content), "limit": limit},
        )
    return content

"""The composer's form: every view that shows the composer validates text with it."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class MessageForm(forms.Form):
    content = forms.CharField(
        label=_("Message"),
        strip=False,
        widget=forms.Textarea(attrs={"rows": 2, "autocomplete": "off"}),
        error_messages={"required": _("Type a message first.")},
    )

    def clean_content(self) -> str:
        content = self.cleaned_data["content"]
        if not content.strip():
            raise forms.ValidationError(_("Type a message first."), code="message_empty")
        limit = settings.CHAT_MAX_MESSAGE_CHARS
        if len(content) > limit:
            raise forms.ValidationError(
                _("The message is %(n)s characters long; the limit is %(limit)s."),
                code="message_too_long",
                params={"n": len(content), "limit": limit},
            )
        return content

"""The ask kind's admin (registered by questionnaires.admin through the registry): its
answers, and a conversation's consultation state on the conversation's page."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from chat.core.metadata import intake_state, state_of
from chat.core.models import Conversation
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.state import state_view


@admin.register(StructuredAnswer)
class StructuredAnswerAdmin(admin.ModelAdmin):
    list_display = ("id", "conversation", "field", "value", "source", "confidence", "created_at")
    list_filter = ("source",)
    search_fields = ("field", "display_text", "raw_text")


@admin.display(description=_("Consultation state"))
def consultation_state(obj: Conversation) -> str:
    """Filled, missing and skipped slots with confidence and raw text (spec 004)."""

    view = state_view(state_of(obj))
    rows = format_html_join(
        "",
        "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                name,
                view["display"].get(name, value),
                view["confidence"].get(name, ""),
                view["raw_text"].get(name, ""),
            )
            for name, value in view["consultation_state"].items()
        ),
    )
    return format_html(
        "<table><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>{}</table>"
        "<p>{}: {}</p><p>{}: {}</p><p>{}: {}</p>",
        _("Field"), _("Value"), _("Confidence"), _("Raw text"), rows,
        _("Missing"), ", ".join(view["missing_slots"]) or "—",
        _("Skipped"), ", ".join(view["skipped_slots"]) or "—",
        _("Intake"), intake_state(obj) or "—",
    )  # fmt: skip


# The sections this kind adds to a conversation's admin page (chat.admin).
CONVERSATION_FIELDS = (consultation_state,)

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from questionnaires.analytics.admin import CardDefinitionAdmin
from questionnaires.models import (
    CardDefinition,
    Elicitation,
    InteractiveForm,
    Repair,
    StructuredAnswer,
    Submission,
)


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("questionnaire_id", "conversation", "message", "created_at")
    search_fields = ("questionnaire_id",)
    readonly_fields = ("created_at",)


@admin.register(InteractiveForm)
class InteractiveFormAdmin(admin.ModelAdmin):
    list_display = ("ask_id", "conversation", "tool_use_id", "status", "created_at")
    list_filter = ("status",)
    search_fields = ("ask_id", "tool_use_id")


@admin.register(StructuredAnswer)
class StructuredAnswerAdmin(admin.ModelAdmin):
    list_display = ("id", "conversation", "field", "value", "source", "confidence", "created_at")
    list_filter = ("source",)
    search_fields = ("field", "display_text", "raw_text")


@admin.register(Elicitation)
class ElicitationAdmin(admin.ModelAdmin):
    list_display = ("id", "server_name", "mode", "status", "conversation", "created_at")
    list_filter = ("status", "mode")
    search_fields = ("server_name", "tool_name", "tool_call_id", "remote_id")
    readonly_fields = ("created_at", "answered_at", "answered_by", "content")


admin.site.register(CardDefinition, CardDefinitionAdmin)


@admin.register(Repair)
class RepairAdmin(admin.ModelAdmin):
    """What typed replies did while a question waited (conversation repair, issue 36):
    how often people type instead of clicking, digress, or wear a question out."""

    list_display = (
        "id",
        "conversation",
        "kind",
        "outcome",
        "reprompts",
        "typed_text",
        "created_at",
    )
    list_filter = ("outcome", "kind")
    search_fields = ("typed_text", "wait_ref")
    readonly_fields = (
        "conversation",
        "wait_ref",
        "kind",
        "typed_text",
        "outcome",
        "payload",
        "reprompts",
        "open",
        "created_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

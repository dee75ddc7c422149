from __future__ import annotations

from django.contrib import admin

from questionnaires.analytics.admin import CardDefinitionAdmin
from questionnaires.models import (
    CardDefinition,
    Elicitation,
    InteractiveForm,
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

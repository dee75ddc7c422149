"""The inline kind's admin (registered by questionnaires.admin through the registry)."""

from __future__ import annotations

from django.contrib import admin

from questionnaires.inline.models import Submission


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("questionnaire_id", "conversation", "message", "created_at")
    search_fields = ("questionnaire_id",)
    readonly_fields = ("created_at",)

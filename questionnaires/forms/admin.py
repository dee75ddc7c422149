"""The deferred form kind's admin (registered by questionnaires.admin through the registry)."""

from __future__ import annotations

from django.contrib import admin

from questionnaires.forms.models import InteractiveForm


@admin.register(InteractiveForm)
class InteractiveFormAdmin(admin.ModelAdmin):
    list_display = ("ask_id", "conversation", "tool_use_id", "status", "created_at")
    list_filter = ("status",)
    search_fields = ("ask_id", "tool_use_id")

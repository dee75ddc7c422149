"""The elicitation kind's admin (registered by questionnaires.admin through the registry)."""

from __future__ import annotations

from django.contrib import admin

from questionnaires.elicitations.models import Elicitation


@admin.register(Elicitation)
class ElicitationAdmin(admin.ModelAdmin):
    list_display = ("id", "server_name", "mode", "status", "conversation", "created_at")
    list_filter = ("status", "mode")
    search_fields = ("server_name", "tool_name", "tool_call_id", "remote_id")
    readonly_fields = ("created_at", "answered_at", "answered_by", "content")

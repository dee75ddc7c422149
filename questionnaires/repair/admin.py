"""Conversation repairs in admin (issue 36): what typed replies did while a question
waited — how often people type instead of clicking, digress, or wear a question out."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest


class RepairAdmin(admin.ModelAdmin):
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

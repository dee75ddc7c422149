"""Template helpers for the chat pages (no database access)."""

from __future__ import annotations

from django import template

from chat.edge.page import llm_configured

register = template.Library()


@register.simple_tag
def llm_ready() -> bool:
    """`{% llm_ready as ready %}`: can the OpenAI-compatible agent answer at all?"""
    return llm_configured()

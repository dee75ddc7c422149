"""Template helpers for the chat pages (no database access)."""

from __future__ import annotations

from django import template

from chat.edge.page import llm_configured
from questionnaires.registry import static_files

register = template.Library()


@register.simple_tag
def llm_ready() -> bool:
    """`{% llm_ready as ready %}`: can the OpenAI-compatible agent answer at all?"""
    return llm_configured()


@register.simple_tag
def kind_static(extension: str) -> tuple[str, ...]:
    """`{% kind_static ".js" as scripts %}`: every registered kind's static files of a type."""
    return tuple(path for path in static_files() if path.endswith(extension))

"""Template helpers for the chat pages (no database access)."""

from __future__ import annotations

from django import template
from django.conf import settings

from chat.edge.page import llm_configured
from chat.usecases import agent_name
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


@register.simple_tag
def demo_login() -> dict[str, str] | None:
    """`{% demo_login as demo %}`: the demo account `make run` creates, shown on the login
    page only when DEBUG is on (never in production)."""
    if not settings.DEBUG:
        return None
    return {"username": settings.DEMO_USERNAME, "password": settings.DEMO_PASSWORD}


@register.filter
def agent_label(agent: str) -> str:
    """`{{ conversation.agent|agent_label }}`: the agent's short, human name."""
    return agent_name(agent)

"""Template helpers for the chat pages (no database access but the demo login's one read)."""

from __future__ import annotations

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString

from chat.core.agents import Agent, agent_get
from chat.core.agents import agent_label as agent_label_of
from chat.core.demo import DemoLogin, demo_login_shown
from chat.core.stream_events import EVENT_NAMES
from questionnaires.registry import static_files

register = template.Library()


@register.simple_tag
def agent_info(name: str) -> Agent | None:
    """`{% agent_info conversation.agent as agent %}`: the registered agent of that name (its
    words, `agent.ready`, its notice), or None when it is no longer registered."""
    return agent_get(name)


@register.simple_tag
def kind_static(extension: str) -> tuple[str, ...]:
    """`{% kind_static ".js" as scripts %}`: every registered kind's static files of a type."""
    return tuple(path for path in static_files() if path.endswith(extension))


@register.simple_tag
def sse_event_names() -> SafeString:
    """`{% sse_event_names %}`: the stream's event names (chat.core.stream_events) as a
    `json_script` with the id `sse-event-names`, which static/js/chat.js reads."""
    return json_script(list(EVENT_NAMES), "sse-event-names")


@register.simple_tag
def demo_login() -> DemoLogin | None:
    """`{% demo_login as demo %}`: the demo account `make run` created, only while it exists
    with the password it was given (one indexed read; see chat.core.demo)."""
    return demo_login_shown()


@register.filter
def agent_label(agent: str) -> str:
    """`{{ conversation.agent|agent_label }}`: the agent's short, human name."""
    return agent_label_of(agent)

"""The agent's tools, one module each, listed explicitly in `TOOLS`."""

from __future__ import annotations

from . import ask_user_options, interactive_form_question, questionnaire_async
from .base import DEFERRED_FLAG, Tool, ToolContext

TOOLS: tuple[Tool, ...] = (
    questionnaire_async.TOOL,
    interactive_form_question.TOOL,
    ask_user_options.TOOL,
)
TOOLS_BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


def tools_prompt(lang: str) -> str:
    """System-prompt sections of the tools that teach more than their description
    (`questionnaire_async` is taught by the protocol prompt itself)."""
    return ask_user_options.prompt(lang)


__all__ = ["DEFERRED_FLAG", "TOOLS", "TOOLS_BY_NAME", "Tool", "ToolContext", "tools_prompt"]

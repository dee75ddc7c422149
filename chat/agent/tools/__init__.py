"""The agent's tools, one module each, listed explicitly in `TOOLS`."""

from __future__ import annotations

from . import interactive_form_question, questionnaire_async
from .base import DEFERRED_FLAG, Tool, ToolContext

TOOLS: tuple[Tool, ...] = (questionnaire_async.TOOL, interactive_form_question.TOOL)

__all__ = ["DEFERRED_FLAG", "TOOLS", "Tool", "ToolContext"]

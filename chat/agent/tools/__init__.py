"""The agent's tools, one module each, listed explicitly in `TOOLS`."""

from __future__ import annotations

from . import questionnaire_async
from .base import DEFERRED_FLAG, Tool, ToolContext

TOOLS: tuple[Tool, ...] = (questionnaire_async.TOOL,)

__all__ = ["DEFERRED_FLAG", "TOOLS", "Tool", "ToolContext"]

"""LLM backends behind the `LLMClient` protocol (see `base.py`)."""

from __future__ import annotations

from .base import Completion, LLMClient, LLMError

__all__ = ["Completion", "LLMClient", "LLMError"]

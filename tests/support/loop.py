"""Driving the pure agent loop with a scripted client, and the replies the tests use
(the agent's and the runs' tests share them)."""

from __future__ import annotations

import json
from typing import Any

from chat.agent.events import RunStopped, ToolCall
from chat.agent.llm.scripted import ScriptedClient, Turn
from chat.agent.loop import LoopConfig, run_loop
from chat.agent.tools import TOOLS

USER = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]

VALID = """Pick one.

```questionnaire
title: Choice
questions:
  - type: single_choice
    text: Which?
    options:
      - A
      - B
    default: A
```
"""
INVALID = VALID.replace("single_choice", "multiple_choice")
GOOD_ARGS = {"title": "T", "questions": [{"type": "single_choice", "text": "Q?", "options": ["x"]}]}
BAD_ARGS = {"questions": []}


def call(name: str, arguments: Any, id: str = "") -> ToolCall:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=id, name=name, arguments=raw)


def drive(turns: list[Turn], tools=TOOLS, config: LoopConfig | None = None, **kw):
    client = ScriptedClient(turns, chunk_chars=4)
    events = list(run_loop(client=client, tools=tools, messages=USER, config=config, **kw))
    assert isinstance(events[-1], RunStopped)
    assert sum(isinstance(e, RunStopped) for e in events) == 1
    return events, client


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]

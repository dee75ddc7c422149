"""The Protocol tour script: every step ends the way the tour promises."""

from __future__ import annotations

import pytest

from chat.agent.events import AssistantMessage, SelfCheckFailed, Stop, ToolResultEvent
from chat.agent.llm.scripted import ScriptedClient, script_load
from chat.agent.loop import LoopConfig, run_loop
from chat.agent.tools import TOOLS
from chat.agent.tools.base import Tool

# The demo MCP server's tool, as the turn offers it (the real one: tests/mcphost).
RESERVE = Tool(
    name="demo__reserve_table",
    description="[MCP server demo] Reserve a table.",
    parameters={"type": "object", "properties": {"restaurant": {"type": "string"}}},
    execute=lambda arguments, context: {"success": True, "content": [{"type": "text"}]},
    idempotent=False,
)

EXPECTED = [
    Stop.AWAITING_USER_INPUT,  # fenced single choice + Other
    Stop.AWAITING_USER_INPUT,  # multi choice + free text
    Stop.AWAITING_USER_INPUT,  # sage-questionnaire
    Stop.AWAITING_USER_INPUT,  # XML+JSON
    Stop.AWAITING_USER_INPUT,  # self-check repair
    Stop.AWAITING_USER_INPUT,  # questionnaire_async failure then success
    Stop.AWAITING_USER_INPUT,  # ask_user_options (spec 004)
    Stop.AWAITING_USER_INPUT,  # an MCP server's elicitation, then a questionnaire
    Stop.MAX_ITERATIONS,  # the pause questionnaire
    Stop.AWAITING_USER_INPUT,  # resumed: keep a default, skip, decline (issue 27)
    Stop.AWAITING_USER_INPUT,  # change an answer; the question budget repaired
    Stop.COMPLETED,  # the end
]


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_every_step_of_the_tour(lang):
    script = script_load("tour", lang)
    assert len(script.steps) == len(EXPECTED)
    seen = []
    for number, step in enumerate(script.steps, start=1):
        client = ScriptedClient(step.turns)
        config = LoopConfig(lang=lang, max_iterations=step.max_iterations or 50, budget=step.budget)
        events = list(run_loop(client=client, tools=(*TOOLS, RESERVE), messages=[], config=config))
        assert client.calls == len(step.turns), f"step {number} left turns unused"
        seen.append(events[-1].stop_reason)
        failures = [e for e in events if isinstance(e, SelfCheckFailed)]
        shown = [e for e in events if isinstance(e, AssistantMessage)]
        assert all(m.kind != "self_check_gave_up" for m in shown)
        if number in (5, 11):
            assert len(failures) == 1
            if number == 11:  # the budget's precise repair request
                assert [i["code"] for i in failures[0].issues] == ["selfcheck.budget_turn"]
        else:
            assert not failures, f"step {number}: {failures}"
        results = [e.result for e in events if isinstance(e, ToolResultEvent)]
        if number == 6:
            assert [r["success"] for r in results] == [False, True]
        if number == 7:
            (ask,) = results
            assert ask["success"] is True and ask["field"] == "tour_feedback", ask
            assert 2 <= len(ask["ask"]["options"]) <= 5 and ask["ask"]["allow_free_text"]
            assert ask["reference"]["title"]
        if number == 8:
            (reserved,) = results
            assert reserved["success"] is True, reserved
    assert seen == EXPECTED


def test_past_the_end_the_fallback_answers():
    script = script_load("tour", "en")
    assert script.step(99).turns[0].text.startswith("The tour is over")

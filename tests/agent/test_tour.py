"""The Protocol tour script: every step ends the way the tour promises."""

from __future__ import annotations

import json
import re

import pytest
from django.utils import translation
from django.utils.translation import gettext as _

from chat.agent.events import AssistantMessage, SelfCheckFailed, Stop, ToolResultEvent
from chat.agent.llm.scripted import Script, ScriptedClient, script_load
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
    Stop.AWAITING_USER_INPUT,  # the question budget repaired
    Stop.COMPLETED,  # "press Change answer": no card of its own for the change to close
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


def _prose(text: str) -> list[str]:
    """The step's paragraphs of prose (fenced and XML questionnaires left out)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<questionnaire>.*?</questionnaire>", "", text, flags=re.S)
    return [p.strip() for p in text.split("\n\n") if p.strip()]


def _steps_text(script: Script) -> list[str]:
    return ["\n\n".join(t.text for t in step.turns) for step in script.steps]


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_each_step_says_which_button_moves_it_on(lang):
    """The tour can be followed by its own words: every step but the last ends with an
    instruction whose bold words are the buttons to press, named as the page names them
    (one verb per action: the cards say Send, so the tour never says Submit)."""
    script = script_load("tour", lang)
    with translation.override(lang):
        buttons = {
            str(_(label)) for label in ("Send", "Continue", "Change answer", "Send the change")
        }
        ask = script.steps[6].turns[0].tool_calls[0]
        buttons |= {o["label"] for o in json.loads(ask.arguments)["options"]}
    for number, text in enumerate(_steps_text(script)[:-1], start=1):
        instruction = _prose(text)[-1]
        pressed = re.findall(r"\*\*(.+?)\*\*", instruction)
        assert pressed and set(pressed) <= buttons, (number, instruction)
    everything = "\n".join(_steps_text(script))
    assert not re.search(r"\bSubmit\b|提交", everything)
    assert not re.findall(r"\*\*(.+?)\*\*", _prose(_steps_text(script)[-1])[-1])


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_no_step_asks_to_change_an_answer_while_its_own_card_is_open(lang):
    """Change answer posts a new message, which closes any card still open: a step that
    asks for it must not ask anything itself, or its card could never be answered."""
    script = script_load("tour", lang)
    with translation.override(lang):
        change = str(_("Change answer"))
    asking = [
        number
        for number, text in enumerate(_steps_text(script), start=1)
        if f"**{change}**" in text
    ]
    assert asking
    for number in asking:
        step = script.steps[number - 1]
        assert "```" not in _steps_text(script)[number - 1] and not any(
            t.tool_calls for t in step.turns
        ), number


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_pause_step_fails_once_not_twice(lang):
    """The pause step shows one failed attempt before pausing: two identical "trouble
    showing a question" boxes said nothing the first did not."""
    script = script_load("tour", lang)
    (pause,) = [s for s in script.steps if s.max_iterations]
    client = ScriptedClient(pause.turns)
    config = LoopConfig(lang=lang, max_iterations=pause.max_iterations or 50)
    events = list(run_loop(client=client, tools=TOOLS, messages=[], config=config))
    failed = [e for e in events if isinstance(e, ToolResultEvent) and not e.result["success"]]
    assert len(failed) == 1
    assert events[-1].stop_reason == Stop.MAX_ITERATIONS

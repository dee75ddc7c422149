"""The question budget (issue 27) in self-check: precise repair messages."""

from __future__ import annotations

from questionnaires.protocol import self_check
from questionnaires.protocol.budget import QuestionBudget, budget_prompt, call_questions

FOUR = """Four things first.

```questionnaire
title: Setup
questions:
  - {type: free_text, text: A?, default: ""}
  - {type: free_text, text: B?, default: ""}
  - {type: free_text, text: C?, default: ""}
  - {type: free_text, text: D?, default: ""}
```
"""
TWO_CARDS = """Two cards.

```questionnaire
title: One
questions:
  - {type: free_text, text: A?, default: ""}
```

<questionnaire>{"title": "Two", "questions": [{"type": "free_text", "text": "B?"}]}</questionnaire>
"""


def test_too_many_questions_in_one_reply_asks_for_the_most_important() -> None:
    check = self_check(FOUR, budget=QuestionBudget(per_turn=3))
    assert not check.passed
    assert [i.code for i in check.issues] == ["selfcheck.budget_turn"]
    assert "ask at most 3 questions; keep the most important" in check.issues[0].message
    assert check.failed_names == frozenset()  # asking less (or nothing) is a repair
    assert "ask at most 3 questions" in (check.diagnostic or "")


def test_within_budget_passes_and_no_budget_means_no_limit() -> None:
    assert self_check(FOUR, budget=QuestionBudget(per_turn=4)).passed
    assert self_check(FOUR).passed
    assert self_check(FOUR, budget=QuestionBudget()).passed


def test_the_conversation_budget_counts_what_was_asked_before() -> None:
    check = self_check(FOUR, budget=QuestionBudget(per_conversation=6, asked=3), lang="zh-hans")
    assert [i.code for i in check.issues] == ["selfcheck.budget_conversation"]
    assert "最多只能问 3 个问题" in check.issues[0].message
    assert self_check(FOUR, budget=QuestionBudget(per_conversation=7, asked=3)).passed


def test_one_card_at_a_time() -> None:
    check = self_check(TWO_CARDS, budget=QuestionBudget(one_card=True))
    assert [i.code for i in check.issues] == ["selfcheck.budget_one_card"]
    assert self_check(TWO_CARDS, budget=QuestionBudget(per_turn=2)).passed


def test_tool_calls_of_the_step_count_even_without_text() -> None:
    budget = QuestionBudget(per_turn=2, one_card=True)
    calls = [
        call_questions("questionnaire_async", '{"questions": [{}, {}]}'),
        call_questions("ask_user_options", "{}"),
        call_questions("search", "{}"),
    ]
    assert calls == [2, 1, 0]
    check = self_check("", budget=budget, tool_cards=calls)
    assert {i.code for i in check.issues} == {"selfcheck.budget_turn", "selfcheck.budget_one_card"}
    assert call_questions("interactive_form_question", "not json") == 1


def test_the_model_is_told_its_budget() -> None:
    note = budget_prompt(QuestionBudget(per_turn=3, per_conversation=10, asked=4), "en")
    assert "ask at most 3 questions per reply" in note and "6 more questions" in note
    assert budget_prompt(QuestionBudget(), "en") == ""
    assert "同一时间只展示一张卡片" in budget_prompt(QuestionBudget(one_card=True), "zh-hans")

"""The question budget (issue 27) in a real turn: the agent's limits from admin (or the
settings), counted over the conversation, enforced by self-check, shown in admin."""

from __future__ import annotations

import pytest
from django.urls import reverse

from chat.agent.llm.scripted import Script, Step, Turn
from chat.core.models import QuestionBudget, Role
from chat.core.services import conversation_create
from chat.runs import turn as turn_module
from chat.usecases import message_post_user
from questionnaires.registry import questions_asked

pytestmark = pytest.mark.django_db


def card(*questions: str) -> str:
    lines = [f"  - {{type: free_text, text: {q}, default: ''}}" for q in questions]
    return (
        "Some questions.\n\n```questionnaire\ntitle: Q\nquestions:\n" + "\n".join(lines) + "\n```\n"
    )


@pytest.fixture
def scripted(user):
    return conversation_create(owner=user, title="Tour", agent="scripted")


@pytest.fixture
def script(monkeypatch):
    def install(*steps: list[Turn]) -> None:
        built = Script(steps=tuple(Step(tuple(t)) for t in steps))
        monkeypatch.setattr(turn_module, "script_load", lambda name, lang="en": built)

    return install


def test_over_the_per_turn_budget_the_model_is_asked_for_the_most_important(scripted, script):
    QuestionBudget.objects.create(agent="scripted", per_turn=2)
    script([Turn(card("A?", "B?", "C?")), Turn(card("A?", "B?"))])
    message_post_user(conversation=scripted, content="hi")
    hidden = scripted.messages.filter(hidden=True).order_by("seq")
    assert any("ask at most 2 questions; keep the most important" in m.content for m in hidden)
    visible = scripted.messages.filter(role=Role.ASSISTANT, hidden=False)
    assert [m.content.count("free_text") for m in visible] == [2]
    assert questions_asked(conversation=scripted) == 2


def test_the_conversation_budget_counts_earlier_questions(scripted, script, settings):
    settings.QUESTION_BUDGET_PER_CONVERSATION = 3
    script(
        [Turn(card("A?", "B?"))],
        [Turn(card("C?", "D?")), Turn("I have what I need; here is the plan.")],
    )
    message_post_user(conversation=scripted, content="hi")
    message_post_user(conversation=scripted, content="go on")
    hidden = scripted.messages.filter(hidden=True)
    assert any("ask at most 1 questions" in m.content for m in hidden)
    visible = list(scripted.messages.filter(role=Role.ASSISTANT, hidden=False).order_by("seq"))
    assert visible[-1].content == "I have what I need; here is the plan."
    assert questions_asked(conversation=scripted) == 2


def test_without_a_budget_nothing_is_limited(scripted, script):
    script([Turn(card("A?", "B?", "C?", "D?", "E?"))])
    message_post_user(conversation=scripted, content="hi")
    assert not scripted.messages.filter(hidden=True).exists()


def test_admin_shows_the_budget_used(admin_client, scripted, script):
    QuestionBudget.objects.create(agent="scripted", per_turn=3, per_conversation=10, one_card=True)
    script([Turn(card("A?", "B?"))])
    message_post_user(conversation=scripted, content="hi")
    page = admin_client.get(reverse("admin:chat_conversation_change", args=[scripted.pk]))
    html = page.content.decode()
    assert "Question budget used" in html and "<strong>2 / 10</strong>" in html
    listing = admin_client.get(reverse("admin:chat_questionbudget_changelist")).content.decode()
    assert "Protocol tour" in listing


def test_every_kind_counts_its_questions(conversation):
    """The budget counts the agent's questions over every kind: inline cards (blocks and
    `questionnaire_async` results), asks (one each) and forms; an MCP server's questions are
    the server's, not the agent's."""
    from chat.core.services import message_create
    from questionnaires.asks.services import ask_create
    from tests.support.asking import SPEC_PAYLOAD, TRIP, open_form, post_async_card

    message_create(conversation=conversation, role="user", content="hi")
    message_create(conversation=conversation, role="assistant", content=TRIP)  # 3
    ask_create(conversation=conversation, payload=SPEC_PAYLOAD, turn_id="t1")  # 1
    open_form(conversation)  # 3
    post_async_card(conversation)  # 1
    assert questions_asked(conversation=conversation) == 8

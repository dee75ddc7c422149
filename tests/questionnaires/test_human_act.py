"""Issue 32 "human act, always" (DESIGN §4.14): an answer exists only because a person acted.

A conversation holds an open card of every kind — an inline questionnaire, an ask, a
deferred form, an MCP elicitation — and then each way a card can end without the person
answering runs: the reaper's expiry, Stop, a cancel through the API, a Retry, the run
reaper, the limits and the budget refusing, the JSON API with tokens that are not a
person's (a run's MCP token, a skill token). None of them may write an answer: no
answer row of any kind, no user message."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from chat.core.identity import mcp_token_issue, skill_token_issue
from chat.core.models import Message, Role, Run, Wait
from chat.core.services import conversation_create, message_create
from chat.core.waits import WaitLimited, wait_open
from chat.runs.services import run_cancel, run_retry
from chat.runs.waits import waits_expire
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.services import ask_create
from questionnaires.elicitations.models import Elicitation, ElicitationStatus
from questionnaires.forms.models import InteractiveForm
from questionnaires.inline.models import Submission
from tests.support.asking import SPEC_PAYLOAD, TRIP, open_elicitation, open_form

pytestmark = pytest.mark.django_db

ANSWERED = (ElicitationStatus.ACCEPTED, ElicitationStatus.DECLINED, ElicitationStatus.COMPLETED)


def answers(conversation) -> dict[str, int]:
    """Every record that would say the person answered something."""
    forms = InteractiveForm.objects.filter(conversation=conversation)
    elicitations = Elicitation.objects.filter(conversation=conversation)
    return {
        "ask answers": StructuredAnswer.objects.filter(conversation=conversation).count(),
        "card answers": Submission.objects.filter(conversation=conversation).count(),
        "form answers": forms.exclude(answer=None).count()
        + forms.filter(status="answered").count(),
        "elicitation answers": elicitations.filter(status__in=ANSWERED).count()
        + elicitations.exclude(answered_by=None).count()
        + elicitations.exclude(content=None).count(),
        "user messages": Message.objects.filter(conversation=conversation, role=Role.USER).count(),
    }


NONE = {
    "ask answers": 0,
    "card answers": 0,
    "form answers": 0,
    "elicitation answers": 0,
    "user messages": 0,
}


@pytest.fixture
def cards(user) -> dict[str, Any]:
    """One open card of every kind, all of one running turn, each with its wait."""
    conversation = conversation_create(owner=user, title="Every card", agent="external")
    run = Run.objects.create(conversation=conversation, status="running")
    inline = message_create(conversation=conversation, role=Role.ASSISTANT, content=TRIP, run=run)
    wait_open(
        conversation=conversation,
        kind="inline",
        ref=f"inline:{inline.pk}",
        seconds=60,
        run=run,
        check_limits=False,
    )
    ask = ask_create(conversation=conversation, payload=SPEC_PAYLOAD, run=run)
    form, _ = open_form(conversation, run=run)
    elicitation = open_elicitation(conversation, run_id=run.pk)
    assert ask is not None and elicitation is not None
    kinds = set(Wait.objects.filter(conversation=conversation).values_list("kind", flat=True))
    assert {"inline", "ask", "form", "elicitation"} <= kinds
    assert answers(conversation) == NONE
    return {"conversation": conversation, "run": run, "ask": ask, "form": form}


def test_expiry_by_the_reaper_answers_nothing(cards):
    Wait.objects.update(deadline=timezone.now() - timedelta(seconds=1))
    assert waits_expire() >= 4
    assert not Wait.objects.filter(status="open").exists()
    assert answers(cards["conversation"]) == NONE


def test_stop_answers_nothing(cards):
    run_cancel(conversation=cards["conversation"], run_id=cards["run"].pk)
    assert answers(cards["conversation"]) == NONE


def test_a_cancel_through_the_api_answers_nothing(client, cards, api_token):
    conversation, run = cards["conversation"], cards["run"]
    response = client.post(
        f"/api/v1/conversations/{conversation.pk}/runs/{run.pk}/cancel",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == 200, response.content
    assert answers(conversation) == NONE


def test_a_retry_answers_nothing(cards):
    conversation, run = cards["conversation"], cards["run"]
    trigger = message_create(conversation=conversation, role=Role.ASSISTANT, content="(start)")
    Run.objects.filter(pk=run.pk).update(status="failed", trigger_message=trigger)
    run_retry(conversation=conversation, run_id=run.pk)
    assert answers(conversation) == NONE


def test_the_limits_refusing_a_card_answer_nothing(cards, settings):
    settings.WAITS_PER_CONVERSATION = 1
    with pytest.raises(WaitLimited):
        wait_open(conversation=cards["conversation"], kind="inline", ref="x", seconds=60)
    assert answers(cards["conversation"]) == NONE


def _answer_calls(conversation, cards) -> list[tuple[str, str, dict[str, Any]]]:
    """Every JSON API call that would answer one of the cards."""
    base = f"/api/v1/conversations/{conversation.pk}"
    ask_turn = cards["ask"].metadata["turn_id"]
    return [
        (
            "ask",
            f"{base}/answers",
            {
                "turn_id": ask_turn,
                "field": "pain_level",
                "value": "mild",
                "source": "user_option_click",
            },
        ),
        (
            "form",
            f"{base}/messages",
            {
                "role": "user",
                "content": "",
                "interactive_form_answer": {
                    "type": "interactive_form_question",
                    "tool_use_id": "call_1",
                    "status": "answered",
                    "answers": {"color": "red"},
                },
            },
        ),
        ("message", f"{base}/messages", {"role": "user", "content": "yes, all of it"}),
    ]


@pytest.mark.parametrize("token_kind", ["mcp run token", "skill token", "no token", "bad token"])
def test_the_api_without_a_persons_token_answers_nothing(client, cards, user, token_kind):
    conversation, run = cards["conversation"], cards["run"]
    ids = {"conversation_id": conversation.pk, "run_id": run.pk, "user_id": user.pk}
    token = {
        "mcp run token": mcp_token_issue(**ids),
        "skill token": skill_token_issue(**ids),
        "no token": "",
        "bad token": "qc_not-a-token",
    }[token_kind]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    for name, url, body in _answer_calls(conversation, cards):
        response = client.post(url, body, content_type="application/json", headers=headers)
        assert response.status_code == 401, (name, response.content)
        assert response.json()["error"] in ("unauthorized", "skill_token_not_allowed")
    # The page's own answer endpoints are for a signed-in person, never a bearer token.
    elicitation = Elicitation.objects.get(conversation=conversation)
    page_posts = [
        reverse("chat:ask_answer", args=[conversation.pk, cards["ask"].pk]),
        reverse("chat:elicitation_answer", args=[conversation.pk, elicitation.pk]),
        reverse("chat:interactive_form_answer", args=[conversation.pk]),
    ]
    for url in page_posts:
        response = client.post(url, {"action": "accept", "value": "mild"}, headers=headers)
        assert response.status_code in (302, 401, 403), (url, response.status_code)
    assert answers(conversation) == NONE


def test_a_persons_api_token_is_a_person_acting(client, user, api_token):
    """(The control: the same call with the person's own token answers — so `answers`
    does see an answer, and the refusals above are the tokens', not the call's.)"""
    conversation = conversation_create(owner=user, title="One ask", agent="external")
    ask = ask_create(conversation=conversation, payload=SPEC_PAYLOAD)
    assert ask is not None
    _, url, body = _answer_calls(conversation, {"ask": ask})[0]
    response = client.post(
        url, body, content_type="application/json", headers={"Authorization": f"Bearer {api_token}"}
    )
    assert response.status_code == 201, response.content
    assert answers(conversation) == {**NONE, "ask answers": 1, "user messages": 1}


def test_a_person_past_the_budget_is_refused_and_nothing_is_answered(client_in, user, settings):
    """A policy refusal of the person's own answer (the daily token budget) stores nothing:
    the answer row and its message roll back together."""
    from chat.core.models import ModelUsage
    from chat.core.usage import usage_day

    conversation = conversation_create(owner=user, title="Spent", agent="scripted")
    ask = ask_create(conversation=conversation, payload=SPEC_PAYLOAD)
    assert ask is not None
    ModelUsage.objects.create(user=user, model="scripted", day=usage_day(), prompt_tokens=50)
    settings.DAILY_TOKEN_BUDGET = 10
    url = reverse("chat:ask_answer", args=[conversation.pk, ask.pk])
    response = client_in.post(url, {"action": "option", "value": "mild"})
    assert response.status_code == 429, response.status_code
    assert answers(conversation) == NONE
    settings.DAILY_TOKEN_BUDGET = 1000  # (the same answer, within the budget, is recorded)
    client_in.post(url, {"action": "option", "value": "mild"})
    assert answers(conversation)["ask answers"] == 1

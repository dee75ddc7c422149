"""Token usage per run, its cost, the totals in admin and the daily budget."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from chat.core.services import conversation_create
from chat.core.usage import tokens_today
from chat.models import Message, ModelUsage, Run
from chat.settings import _model_costs
from chat.usecases import message_post_user
from questionnaires.inline.models import Submission
from tests.support.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.django_db


def instant(user, title="t"):
    """A scripted conversation whose every message gets one instant reply."""
    conversation = conversation_create(owner=user, title=title, agent="scripted")
    conversation.state = {"script": "bench_reply"}
    conversation.save(update_fields=["state"])
    return conversation


def test_an_offline_turn_records_estimated_usage_and_its_cost(user, settings):
    settings.MODEL_COSTS = {"scripted": (Decimal("1.5"), Decimal("6"))}
    conversation = instant(user)
    message_post_user(conversation=conversation, content="hello")
    usage = ModelUsage.objects.get()
    run = Run.objects.get(conversation=conversation)
    assert (usage.user, usage.conversation, usage.run, usage.model) == (
        user,
        conversation,
        run,
        "scripted",
    )
    assert usage.calls == 1 and usage.estimated
    assert usage.prompt_tokens > 10  # the system prompt and the message
    reply = "An instant scripted reply for the agent overhead benchmark."
    assert usage.completion_tokens == (len(reply) + 3) // 4
    expected = (usage.prompt_tokens * Decimal("1.5") + usage.completion_tokens * 6) / 10**6
    assert abs(usage.cost - expected) <= Decimal("0.000001")  # stored to 6 places
    assert tokens_today(user_id=user.pk) == usage.total_tokens


def test_a_model_turn_records_the_reported_usage_of_each_call(user, settings):
    """The endpoint's own counts (stream_options.include_usage), summed per run and model."""
    settings.MODEL_COSTS = {}
    conversation = conversation_create(owner=user, agent="openai")
    tool_step = Reply(
        text="Let me ask.",
        tool_calls=[("c1", "unknown_tool", "{}")],
        usage=(120, 30),
    )
    with FakeOpenAI() as fake:
        settings.LLM_BASE_URL, settings.LLM_API_KEY, settings.LLM_MODEL = fake.base_url, "k", "m-9"
        fake.replies += [tool_step, Reply(text="Done.", usage=(200, 4))]
        message_post_user(conversation=conversation, content="hi")
    usage = ModelUsage.objects.get()
    assert (usage.model, usage.calls, usage.estimated, usage.cost) == ("m-9", 2, False, None)
    assert (usage.prompt_tokens, usage.completion_tokens) == (320, 34)


def test_usage_outlives_a_deleted_conversation(user):
    """Deleting a chat must not reset a person's daily budget."""
    conversation = instant(user)
    message_post_user(conversation=conversation, content="hello")
    used = tokens_today(user_id=user.pk)
    conversation.delete()
    assert used > 0 and tokens_today(user_id=user.pk) == used
    assert ModelUsage.objects.get().conversation is None


@pytest.fixture
def spent(user, settings):
    """alice has a conversation and has used today's budget."""
    conversation = instant(user)
    message_post_user(conversation=conversation, content="hello")
    settings.DAILY_TOKEN_BUDGET = tokens_today(user_id=user.pk)
    return conversation


def _nothing_stored(conversation, messages: int, runs: int) -> None:
    assert Message.objects.filter(conversation=conversation).count() == messages
    assert Run.objects.filter(conversation=conversation).count() == runs


@pytest.mark.parametrize("htmx", [False, True])
def test_past_the_budget_a_typed_message_is_refused_and_kept(client_in, spent, htmx):
    messages, runs = spent.messages.count(), spent.runs.count()
    headers = {"HX-Request": "true"} if htmx else {}
    response = client_in.post(
        reverse("chat:message_send", args=[spent.pk]),
        {"content": "one more question, please"},
        headers=headers,
    )
    assert response.status_code == 429
    html = response.content.decode()
    assert "today&#x27;s allowance" in html or "today's allowance" in html
    assert "midnight UTC" in html
    assert "one more question, please" in html  # nothing typed is lost
    assert ("<html" in html) is not htmx
    _nothing_stored(spent, messages, runs)


def test_past_the_budget_the_api_answers_429_in_its_error_shape(api, spent):
    messages = spent.messages.count()
    response = api.post(
        f"/api/v1/conversations/{spent.pk}/messages", {"role": "user", "content": "more"}
    )
    assert response.status_code == 429
    body = response.json()
    assert body["error"] == "token_budget_exhausted" and "midnight UTC" in body["message"]
    assert body["details"]["budget"] == body["details"]["used"]
    assert 0 < int(response["Retry-After"]) <= 86400
    assert response["Retry-After"] == str(body["details"]["retry_after"])
    _nothing_stored(spent, messages, spent.runs.count())


def test_past_the_budget_a_card_answer_is_refused_and_not_recorded(client_in, user, settings):
    tour = conversation_create(owner=user, title="tour", agent="scripted")
    message_post_user(conversation=tour, content="start")
    card = tour.messages.filter(role="assistant").latest("seq")
    settings.DAILY_TOKEN_BUDGET = tokens_today(user_id=user.pk)
    messages = tour.messages.count()
    response = client_in.post(
        reverse("chat:questionnaire_submit", args=[tour.pk, card.pk]),
        {"questionnaire_id": f"{card.pk}_q1", "answer-1": "Building an agent"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 429
    html = response.content.decode()
    assert "midnight UTC" in html
    assert 'value="Building an agent" checked' in html  # the selection is kept
    assert not Submission.objects.exists()  # the card stays answerable
    _nothing_stored(tour, messages, 1)


def test_the_budget_counts_only_model_calling_agents(user, spent):
    echo = conversation_create(owner=user, title="e", agent="echo")
    message_post_user(conversation=echo, content="still fine")
    assert echo.messages.filter(role="assistant").exists()


def test_no_budget_by_default(user, settings):
    assert settings.DAILY_TOKEN_BUDGET == 0
    conversation = instant(user)
    for text in ("one", "two"):
        message_post_user(conversation=conversation, content=text)
    assert conversation.runs.count() == 2


@pytest.mark.parametrize(
    "raw", ["[1, 2]", '{"m": [1]}', '{"m": "cheap"}', '{"m": [-1, 2]}', "not json"]
)
def test_model_costs_are_checked_at_start(raw):
    with pytest.raises(ImproperlyConfigured):
        _model_costs(raw)


def test_model_costs_parse():
    assert _model_costs('{"gpt-x": [0.15, "0.6"]}') == {"gpt-x": (Decimal("0.15"), Decimal("0.6"))}
    assert _model_costs("") == {}


def test_admin_shows_totals_per_conversation_and_per_user(
    client, user, settings, django_user_model
):
    settings.MODEL_COSTS = {"scripted": (Decimal("2"), Decimal("8"))}
    settings.DAILY_TOKEN_BUDGET = 1_000_000
    conversation = instant(user, title="Costly")
    message_post_user(conversation=conversation, content="hello")
    usage = ModelUsage.objects.get()
    admin = django_user_model.objects.create_superuser("root", "r@example.com", "pw-root-123")
    client.force_login(admin)
    page = client.get(reverse("admin:chat_conversation_change", args=[conversation.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "Token usage" in html and f"{usage.prompt_tokens:,}" in html and "estimated" in html
    listing = client.get(reverse("admin:chat_conversation_changelist")).content.decode()
    assert f"{usage.total_tokens:,}" in listing
    people = client.get(reverse("admin:chat_usagebyuser_changelist")).content.decode()
    assert f"{usage.total_tokens:,} / 1,000,000" in people and "USD" in people
    detail = client.get(reverse("admin:chat_usagebyuser_change", args=[user.pk]))
    assert detail.status_code == 200 and "scripted" in detail.content.decode()
    rows = client.get(reverse("admin:chat_modelusage_changelist"))
    assert rows.status_code == 200 and "Costly" in rows.content.decode()
    assert client.get(reverse("admin:chat_modelusage_add")).status_code == 403

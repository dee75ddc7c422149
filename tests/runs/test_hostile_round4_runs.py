"""Hostile input, round 4 (issue 34 items 2, 3, 6): no way of asking for a turn skips the
daily token budget, a stopped or failed model call still counts, and one person can't
hold every run worker (one turn at a time per conversation, a per-person cap of turns in
flight with fair queueing)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from django.urls import reverse

from chat.core.models import Conversation, Message, ModelUsage, Role, Run, RunStatus
from chat.core.services import conversation_create, message_create
from chat.core.usage import TokenBudgetExhausted, tokens_today
from chat.runs import runner
from chat.runs import turn as turn_module
from chat.runs.agents import ECHO
from chat.runs.heartbeat import run_reap_stale
from chat.runs.services import run_cancel, run_retry
from chat.usecases import conversation_start, message_post_user
from tests.support import wait_for
from tests.support.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.django_db


# --- the budget, on every way of asking for a turn (items 2 and 6) ---------------------


def instant(user, title="t"):
    conversation = conversation_create(owner=user, title=title, agent="scripted")
    conversation.state = {"script": "bench_reply"}
    conversation.save(update_fields=["state"])
    return conversation


@pytest.fixture
def spent(user, settings):
    """alice used today's budget in a scripted chat whose last turn she stopped."""
    conversation = instant(user)
    message_post_user(conversation=conversation, content="hello")
    run = conversation.runs.get()
    Run.objects.filter(pk=run.pk).update(status=RunStatus.CANCELLED, stop_reason="cancelled")
    settings.DAILY_TOKEN_BUDGET = tokens_today(user_id=user.pk)
    return conversation


def _counts() -> tuple[int, int, int]:
    return Conversation.objects.count(), Message.objects.count(), Run.objects.count()


def test_past_the_budget_retry_is_refused_where_it_was_clicked(client_in, spent):
    run = spent.runs.get()
    before = _counts()
    url = reverse("chat:run_retry", args=[spent.pk, run.pk])
    response = client_in.post(url, headers={"HX-Request": "true"})
    assert response.status_code == 429
    html = response.content.decode()
    assert 'data-error-code="token_budget_exhausted"' in html and "midnight UTC" in html
    assert "run-retry" in html  # Retry stays offered (tomorrow, or with a bigger budget)
    assert 0 < int(response["Retry-After"]) <= 86400
    plain = client_in.post(url)
    assert plain.status_code == 429 and "midnight UTC" in plain.content.decode()
    assert _counts() == before
    # The stopped turn's reply is still shown: a refused Retry replaced nothing.
    assert not spent.messages.filter(hidden=True).exists()


def test_past_the_budget_retry_is_refused_in_the_service(spent):
    with pytest.raises(TokenBudgetExhausted) as refused:
        run_retry(conversation=spent, run_id=spent.runs.get().pk)
    assert refused.value.status == 429 and refused.value.code == "token_budget_exhausted"


@pytest.mark.parametrize(("language", "words"), [("en", "midnight UTC"), ("zh-hans", "UTC 午夜")])
def test_past_the_budget_starting_a_tour_with_the_box_empty_is_refused(
    client_in, spent, language, words
):
    before = _counts()
    response = client_in.post(
        reverse("chat:conversation_create"),
        {"agent": "scripted", "content": ""},
        headers={"Accept-Language": language},
    )
    assert response.status_code == 429
    assert words in response.content.decode()  # on the home composer, in her language
    assert _counts() == before  # no conversation left behind without its opening


def test_past_the_budget_a_typed_first_message_keeps_its_text(client_in, spent):
    before = _counts()
    response = client_in.post(
        reverse("chat:conversation_create"), {"agent": "scripted", "content": "plan my week"}
    )
    assert response.status_code == 429 and "plan my week" in response.content.decode()
    assert _counts() == before


def test_past_the_budget_every_path_is_refused(user, spent, api):
    with pytest.raises(TokenBudgetExhausted):
        conversation_start(owner=user, agent="scripted", language="en")
    with pytest.raises(TokenBudgetExhausted):
        message_post_user(conversation=spent, content="typed")
    before = _counts()
    typed = api.post(
        f"/api/v1/conversations/{spent.pk}/messages", {"role": "user", "content": "api"}
    )
    assert typed.status_code == 429 and typed.json()["error"] == "token_budget_exhausted"
    # A run opened for an external runtime (its MCP token) on a chat of a model agent.
    opened = api.post(f"/api/v1/conversations/{spent.pk}/runs")
    assert opened.status_code == 429 and opened.json()["error"] == "token_budget_exhausted"
    assert _counts() == before


def test_an_external_runtimes_run_calls_no_model_of_ours_and_opens(user, spent, api):
    external = conversation_create(owner=user, title="x", agent="external")
    assert api.post(f"/api/v1/conversations/{external.pk}/runs").status_code == 201


def test_past_the_budget_a_card_answer_is_refused(client_in, user, settings):
    tour = conversation_create(owner=user, title="tour", agent="scripted")
    message_post_user(conversation=tour, content="start")
    card = tour.messages.filter(role="assistant").latest("seq")
    settings.DAILY_TOKEN_BUDGET = tokens_today(user_id=user.pk)
    before = _counts()
    response = client_in.post(
        reverse("chat:questionnaire_submit", args=[tour.pk, card.pk]),
        {"questionnaire_id": f"{card.pk}_q1", "answer-1": "Building an agent"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 429 and _counts() == before


# --- a stopped or failed model call counts (item 2) ------------------------------------


@pytest.fixture
def scripted(user):
    return conversation_create(owner=user, title="Tour", agent="scripted")


def test_a_stopped_model_call_records_its_prompt_and_what_it_streamed(scripted, monkeypatch):
    class Stopped:
        def stream(self, messages, tools):
            yield "first words "
            Run.objects.filter(conversation=scripted).update(cancel_requested=True)
            yield "then more"
            raise AssertionError("the turn should have stopped reading")

    monkeypatch.setattr(turn_module, "CANCEL_POLL_SECONDS", 0)
    monkeypatch.setattr(turn_module, "ScriptedClient", lambda *a, **k: Stopped())
    message_post_user(conversation=scripted, content="hi")
    run = scripted.runs.get()
    assert run.status == RunStatus.CANCELLED
    usage = ModelUsage.objects.get(run=run)
    assert usage.calls == 1 and usage.estimated
    assert usage.prompt_tokens > 100  # the system prompt and the message
    assert usage.completion_tokens >= len("first words ") // 4


def test_stop_retry_stop_counts_every_call_and_ends_at_the_budget(scripted, monkeypatch, settings):
    """The hostile loop: Stop, Retry, Stop, Retry… Each stopped call counts, so the
    budget is reached and the next Retry is refused."""

    class Stopped:
        def stream(self, messages, tools):
            yield "partial"
            Run.objects.filter(conversation=scripted, status=RunStatus.RUNNING).update(
                cancel_requested=True
            )
            yield " more"

    monkeypatch.setattr(turn_module, "CANCEL_POLL_SECONDS", 0)
    monkeypatch.setattr(turn_module, "ScriptedClient", lambda *a, **k: Stopped())
    message_post_user(conversation=scripted, content="hi")
    one_call = tokens_today(user_id=scripted.owner_id)
    settings.DAILY_TOKEN_BUDGET = one_call * 3
    retries = 0
    with pytest.raises(TokenBudgetExhausted):
        for _ in range(10):
            latest = scripted.runs.order_by("-pk").first()
            assert latest.status == RunStatus.CANCELLED
            run_retry(conversation=scripted, run_id=latest.pk)
            retries += 1
    assert retries == 2  # 3 calls counted; the 4th was refused
    assert ModelUsage.objects.filter(user=scripted.owner).count() == 3


def test_a_model_stream_broken_off_counts_one_refused_does_not(user, settings):
    settings.MODEL_COSTS = {}
    conversation = conversation_create(owner=user, agent="openai")
    with FakeOpenAI() as fake:
        settings.LLM_BASE_URL, settings.LLM_API_KEY, settings.LLM_MODEL = fake.base_url, "k", "m"
        fake.replies += [Reply(text="a long answer cut short", disconnect_after=3)]
        message_post_user(conversation=conversation, content="hi")
        broken = conversation.runs.get()
        assert broken.status == RunStatus.FAILED
        usage = ModelUsage.objects.get(run=broken)
        assert usage.estimated and usage.prompt_tokens > 0
        fake.replies += [Reply(status=500)]
        run_retry(conversation=conversation, run_id=broken.pk)
    refused = conversation.runs.order_by("-pk").first()
    assert refused.status == RunStatus.FAILED
    assert not ModelUsage.objects.filter(run=refused).exists()  # no model read the prompt


# --- one turn at a time per conversation, a cap per person (item 3) --------------------


class Turns:
    """An agent kind whose turns note what ran beside them, and may act meanwhile (send
    messages as the person would while the turn runs)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, int, int, int]] = []
        self.during: dict[int, object] = {}

    def __call__(self, run: Run) -> str:
        mine = Run.objects.filter(status=RunStatus.RUNNING)
        here = mine.filter(conversation_id=run.conversation_id).count()
        person = mine.filter(conversation__owner_id=run.conversation.owner_id).count()
        self.log.append(("start", run.pk, here, person))
        action = self.during.pop(run.conversation_id, None)
        if callable(action):
            action()
        text = run.trigger_message.content if run.trigger_message else ""
        message_create(
            conversation=run.conversation, role=Role.ASSISTANT, content=f"re: {text}", run=run
        )
        self.log.append(("end", run.pk, 0, 0))
        return "completed"


@pytest.fixture
def turns(monkeypatch):
    kind = Turns()
    monkeypatch.setattr(runner, "run_agent", lambda run: (ECHO, kind))  # echo's turn, replaced
    return kind


def _first_run(conversation):
    return conversation.runs.order_by("pk").first()


def test_messages_sent_during_a_turn_queue_behind_it_one_at_a_time(conversation, turns):
    """Six messages into one conversation: the five sent while the first turn runs are
    kept and queued; each turn starts after the one before it ended, in order."""

    def five_more() -> None:
        for n in range(2, 7):
            message_post_user(conversation=conversation, content=f"m{n}")
            # Nothing of the later ones ran meanwhile: they wait, held.
        queued = conversation.runs.filter(status=RunStatus.QUEUED)
        assert queued.count() == 5 and not queued.filter(held_at__isnull=True).exists()

    message_create(conversation=conversation, role=Role.USER, content="m1")
    first = Run.objects.create(
        conversation=conversation, trigger_message=conversation.messages.get()
    )
    turns.during[conversation.pk] = five_more
    runner.run_execute(run_id=first.pk)
    runs = list(conversation.runs.order_by("pk"))
    assert [r.status for r in runs] == [RunStatus.FINISHED] * 6
    starts = [entry for entry in turns.log if entry[0] == "start"]
    assert [s[1] for s in starts] == [r.pk for r in runs]  # in the order sent
    assert all(s[2] == 1 for s in starts)  # never two turns of the chat at once
    ends = [entry[1] for entry in turns.log if entry[0] == "end"]
    # Each turn started after the previous one ended (sequential, not nested).
    for before, after in zip(runs, runs[1:], strict=False):
        assert turns.log.index(("end", before.pk, 0, 0)) < turns.log.index(
            next(s for s in starts if s[1] == after.pk)
        )
    assert len(ends) == 6
    replies = conversation.messages.filter(role=Role.ASSISTANT).order_by("seq")
    assert [m.content for m in replies] == ["re: m1"] + [f"re: m{n}" for n in range(2, 7)]


def test_a_person_past_the_cap_waits_and_another_person_starts_at_once(
    user, other_user, turns, settings
):
    settings.AGENT_RUNS_PER_PERSON = 2
    mine = [conversation_create(owner=user, title=f"c{n}", agent="echo") for n in range(3)]
    theirs = conversation_create(owner=other_user, title="b", agent="echo")
    seen: dict[str, object] = {}

    def in_second_turn() -> None:
        # alice's two slots are taken (this turn and the first): her third waits…
        message_post_user(conversation=mine[2], content="third")
        seen["third"] = _first_run(mine[2]).status
        # …and bob's turn starts at once, beside them.
        message_post_user(conversation=theirs, content="bob")
        seen["bob"] = _first_run(theirs).status

    def in_first_turn() -> None:
        message_post_user(conversation=mine[1], content="second")

    message_create(conversation=mine[0], role=Role.USER, content="first")
    first = Run.objects.create(conversation=mine[0], trigger_message=mine[0].messages.get())
    turns.during[mine[0].pk] = in_first_turn
    turns.during[mine[1].pk] = in_second_turn
    runner.run_execute(run_id=first.pk)
    assert seen == {"third": RunStatus.QUEUED, "bob": RunStatus.FINISHED}
    third = _first_run(mine[2])
    assert third.status == RunStatus.FINISHED  # started once a slot of hers freed
    starts = {entry[1]: entry for entry in turns.log if entry[0] == "start"}
    assert starts[_first_run(theirs).pk][3] == 1
    assert max(entry[3] for entry in starts.values()) <= 2


def test_a_held_run_is_not_failed_for_its_wait_and_stop_ends_it_at_once(
    conversation, turns, settings, client_in
):
    from datetime import timedelta

    from django.utils import timezone

    settings.AGENT_QUEUE_TIMEOUT = 60

    def send_then_look() -> None:
        message_post_user(conversation=conversation, content="queued")
        waiting = conversation.runs.order_by("pk").last()
        long_ago = timezone.now() - timedelta(seconds=600)
        Run.objects.filter(pk=waiting.pk).update(created_at=long_ago, dispatched_at=long_ago)
        assert run_reap_stale().failed == []  # waiting its turn is not "nobody took it"
        waiting.refresh_from_db()
        assert waiting.status == RunStatus.QUEUED and waiting.held_at is not None
        region = client_in.get(reverse("chat:run_status", args=[conversation.pk]))
        assert "Queued: the assistant answers this once" in region.content.decode()
        run_cancel(conversation=conversation, run_id=waiting.pk)  # Stop on the queued turn
        waiting.refresh_from_db()
        assert waiting.status == RunStatus.CANCELLED

    message_create(conversation=conversation, role=Role.USER, content="m1")
    first = Run.objects.create(
        conversation=conversation, trigger_message=conversation.messages.get()
    )
    turns.during[conversation.pk] = send_then_look
    runner.run_execute(run_id=first.pk)
    assert [r.status for r in conversation.runs.order_by("pk")] == [
        RunStatus.FINISHED,
        RunStatus.CANCELLED,
    ]


def test_a_lost_release_is_made_up_by_the_reaper(conversation, turns, monkeypatch):
    """The process that ended the turn died before releasing the one behind it."""
    message_create(conversation=conversation, role=Role.USER, content="m1")
    first = Run.objects.create(
        conversation=conversation, trigger_message=conversation.messages.get()
    )
    turns.during[conversation.pk] = lambda: message_post_user(
        conversation=conversation, content="m2"
    )
    with monkeypatch.context() as patched:
        patched.setattr(runner, "runs_release_after", lambda **kw: None)
        runner.run_execute(run_id=first.pk)
    waiting = conversation.runs.order_by("pk").last()
    assert waiting.status == RunStatus.QUEUED and waiting.held_at is not None
    assert run_reap_stale().released == [waiting.pk]
    waiting.refresh_from_db()
    assert waiting.status == RunStatus.FINISHED


# --- the same on PostgreSQL, with real threads (the thread runner) ---------------------


class Gate:
    """A turn that runs until the test opens the gate (a worker busy with a long turn)."""

    def __init__(self) -> None:
        self.open = threading.Event()

    def __call__(self, run: Run) -> str:
        assert self.open.wait(timeout=60), "the gate never opened"
        text = run.trigger_message.content if run.trigger_message else ""
        message_create(
            conversation=run.conversation, role=Role.ASSISTANT, content=f"re: {text}", run=run
        )
        return "completed"


@pytest.fixture
def gate(monkeypatch, settings):
    settings.AGENT_RUNNER = "thread"
    kind = Gate()
    # echo's turn, replaced, and not instant (not one transaction): the gate waits inside it
    monkeypatch.setattr(runner, "run_agent", lambda run: (replace(ECHO, instant=False), kind))
    yield kind
    kind.open.set()
    # The turns' threads end before the test's database is flushed.
    active = Run.objects.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING])
    wait_for(lambda: not active.exists(), "the turns' threads to end")


def _send(client, conversation, text):
    response = client.post(reverse("chat:message_send", args=[conversation.pk]), {"content": text})
    assert response.status_code == 302, response.content[:300]


def _statuses(conversation):
    return list(conversation.runs.order_by("pk").values_list("status", flat=True))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_postgres_six_messages_one_turn_at_a_time(postgres_only, client_in, conversation, gate):
    for n in range(6):
        _send(client_in, conversation, f"m{n}")
    wait_for(
        lambda: _statuses(conversation) == ["running"] + ["queued"] * 5,
        "one turn running, five queued behind it",
    )
    assert conversation.messages.filter(role=Role.USER).count() == 6  # all kept
    gate.open.set()
    wait_for(lambda: _statuses(conversation) == ["finished"] * 6, "all six turns")
    runs = list(conversation.runs.order_by("pk"))
    for before, after in zip(runs, runs[1:], strict=False):
        assert before.finished_at <= after.started_at  # never two at once, in order


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_postgres_a_flood_waits_behind_the_cap_another_person_starts_at_once(
    postgres_only, client, user, other_user, gate, settings
):
    settings.AGENT_RUNS_PER_PERSON = 3
    client.force_login(user)
    mine = [conversation_create(owner=user, title=f"c{n}", agent="echo") for n in range(6)]
    for conversation in mine:
        _send(client, conversation, "flood")

    def alices() -> list[str]:
        return [_first_run(c).status for c in mine]

    wait_for(lambda: alices() == ["running"] * 3 + ["queued"] * 3, "three running, three held")
    from django.test import Client

    bob = Client()
    bob.force_login(other_user)
    theirs = conversation_create(owner=other_user, title="b", agent="echo")
    _send(bob, theirs, "hello")
    wait_for(lambda: _first_run(theirs).status == "running", "bob's turn starting at once")
    assert alices() == ["running"] * 3 + ["queued"] * 3
    gate.open.set()
    wait_for(lambda: alices() == ["finished"] * 6, "alice's six turns")
    runs = [_first_run(c) for c in mine]
    first_ends = sorted(r.finished_at for r in runs[:3])
    for late in runs[3:]:  # each held turn started after one of hers ended
        assert late.started_at >= first_ends[0]

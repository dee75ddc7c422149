"""The kind registry: a fifth kind, registered from the test tree (tests/support/toy_kind),
renders, keeps a draft, holds the conversation while it waits and is answered; its wait
counts against the limits, expires, is ended by Stop and is counted in analytics — with no
line of the product changed. And the registry refuses a broken list of kinds."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from chat.agent.context import context_messages
from chat.core.errors import ChatError
from chat.core.models import Event, Message, Run, RunStatus, Wait, WaitStatus
from chat.core.services import conversation_create, message_create
from chat.core.waits import WaitLimited
from chat.runs.waits import run_waits_end, waits_expire
from questionnaires import registry
from questionnaires.analytics.models import CardDefinition
from questionnaires.analytics.refresh import analytics_refresh
from questionnaires.drafts import CardDraft
from tests.support.toy_kind.kind import toy_ask

pytestmark = pytest.mark.django_db

TOY = "tests.support.toy_kind.kind.KIND"


@pytest.fixture
def toy_registered(settings):
    settings.QUESTIONNAIRE_KINDS = [*settings.QUESTIONNAIRE_KINDS, TOY]
    settings.ROOT_URLCONF = "tests.support.toy_kind.root_urls"
    templates = Path(__file__).resolve().parents[1] / "support" / "toy_kind" / "templates"
    engine = settings.TEMPLATES[0]
    settings.TEMPLATES = [{**engine, "DIRS": [*engine["DIRS"], templates]}]
    yield
    # the settings fixture restores the kinds; the registry follows (setting_changed)


@pytest.fixture
def external(user):
    return conversation_create(owner=user, title="Toys", agent="external")


def _page(client, conversation) -> str:
    return client.get(f"/conversations/{conversation.pk}/").content.decode()


def test_a_toy_kind_renders_keeps_a_draft_holds_the_conversation_and_is_answered(
    toy_registered, client_in, external
):
    ask = toy_ask(conversation=external, question="What is your favourite toy?")
    page = _page(client_in, external)
    assert f'id="toy-{ask.pk}"' in page and "What is your favourite toy?" in page
    assert f'data-draft-key="toy:{ask.pk}"' in page
    assert "toy/toy.js" in page  # its static files come with it
    assert 'data-card-state="t"' in page  # open tabs follow it

    # a draft
    draft = {"card_key": f"toy:{ask.pk}", "text": "a kite"}
    assert client_in.post(f"/conversations/{external.pk}/drafts", draft).status_code == 204
    assert 'value="a kite"' in _page(client_in, external)

    # while it waits, other input is refused alike: the composer, the API, a slot edit
    response = client_in.post(f"/conversations/{external.pk}/messages", {"content": "hi"})
    assert response.status_code == 409
    assert "A toy card waits for your answer." in response.content.decode()
    with pytest.raises(ChatError) as refused:
        registry.input_refuse_if_waiting(conversation=external)
    assert refused.value.code == "pending_toy"
    edit = client_in.post(f"/conversations/{external.pk}/state/anything", {"text": "x"})
    assert edit.status_code == 409

    # answered through its own URL: the answer is the next user message, the draft is gone
    answered = client_in.post(f"/conversations/{external.pk}/toys/{ask.pk}", {"text": "a kite"})
    assert answered.status_code == 302
    page = _page(client_in, external)
    assert "Answered: a kite" in page and f'id="toy-{ask.pk}"' in page
    assert not CardDraft.objects.exists()
    registry.input_refuse_if_waiting(conversation=external)  # nothing waits any more
    assert (
        client_in.post(f"/conversations/{external.pk}/messages", {"content": "hi"}).status_code
        == 302
    )

    # the model never reads the toy's card message (Kind.model_sees=False)
    assert "favourite toy" not in str(context_messages(conversation=external))
    assert Message.objects.filter(conversation=external, content="a kite").exists()


def test_a_closed_or_unknown_toy_card_keeps_no_draft(toy_registered, client_in, external):
    ask = toy_ask(conversation=external, question="Which one?")
    url = f"/conversations/{external.pk}/drafts"
    unknown = client_in.post(url, {"card_key": f"toy:{ask.pk + 1}", "text": "x"})
    assert unknown.status_code == 404 and unknown["X-Error-Code"] == "draft_card_not_found"
    client_in.post(f"/conversations/{external.pk}/toys/{ask.pk}", {"text": "done"})
    closed = client_in.post(url, {"card_key": f"toy:{ask.pk}", "text": "late"})
    assert closed.status_code == 404
    assert not CardDraft.objects.exists()


def test_without_the_toy_its_draft_keys_mean_nothing(client_in, external):
    # a toy card left from when the toy was registered (no kind opens a wait unregistered)
    ask = message_create(
        conversation=external, role="assistant", content="Which one?", metadata={"kind": "toy"}
    )
    response = client_in.post(
        f"/conversations/{external.pk}/drafts", {"card_key": f"toy:{ask.pk}", "text": "x"}
    )
    assert response.status_code == 400 and response["X-Error-Code"] == "draft_invalid"
    assert 'id="toy-' not in _page(client_in, external)


@pytest.mark.parametrize("attribute", ["name", "draft_prefix"])
def test_two_kinds_may_not_share_a_name_or_a_draft_prefix(settings, attribute):
    settings.QUESTIONNAIRE_KINDS = [TOY, "tests.questionnaires.test_registry.TWIN_" + attribute]
    with pytest.raises(ImproperlyConfigured):
        registry.kinds()


def test_an_entry_that_is_not_a_kind_is_refused(settings):
    settings.QUESTIONNAIRE_KINDS = ["chat.core.models.Message"]
    with pytest.raises(ImproperlyConfigured):
        registry.kinds()


def test_every_kind_has_the_same_file_layout():
    """urls, views, kind, services, selectors, presenter, models: the contract
    `kind-order` orders them, so each kind must have them all."""
    root = Path(registry.__file__).resolve().parent
    for path in registry.settings.QUESTIONNAIRE_KINDS:
        package = root / path.split(".")[1]
        names = {p.stem for p in package.glob("*.py")}
        missing = {"urls", "views", "kind", "services", "selectors", "presenter", "models"} - names
        assert not missing, f"{package.name} lacks {sorted(missing)}"


def _twin(**overrides: str) -> registry.Kind:
    from dataclasses import replace

    from tests.support.toy_kind.kind import KIND

    return replace(KIND, **overrides)


TWIN_name = _twin(draft_prefix="twin")
TWIN_draft_prefix = _twin(name="twin")


def test_manage_py_check_reports_a_wrong_line(settings):
    from questionnaires.apps import kinds_check

    assert kinds_check() == []
    settings.QUESTIONNAIRE_KINDS = [*settings.QUESTIONNAIRE_KINDS, "questionnaires.nowhere.KIND"]
    (error,) = kinds_check()
    assert error.id == "questionnaires.E001"


# --- issue 35: the toy also waits, expires, is stopped and is counted -------------------


def _wait(message) -> Wait:
    return Wait.objects.get(ref=f"toy:{message.pk}")


def test_a_toy_card_waits_counts_against_the_limits_and_its_answer_closes_the_wait(
    toy_registered, client_in, external, settings
):
    ask = toy_ask(conversation=external, question="What is your favourite toy?")
    wait = _wait(ask)
    assert (wait.kind, wait.status, wait.owner_id) == ("toy", WaitStatus.OPEN, external.owner_id)

    settings.WAITS_PER_CONVERSATION = 1  # the toy's wait counts like any person-wait
    before = Message.objects.count()
    with pytest.raises(WaitLimited):
        toy_ask(conversation=external, question="And another?")
    assert Message.objects.count() == before  # refused whole: no card without its wait

    client_in.post(f"/conversations/{external.pk}/toys/{ask.pk}", {"text": "a kite"})
    assert _wait(ask).status == WaitStatus.ANSWERED  # closed by its answer (answer_post)


def test_the_reaper_expires_a_toy_card_through_its_kind(toy_registered, client_in, external):
    ask = toy_ask(conversation=external, question="Which one?")
    Wait.objects.filter(pk=_wait(ask).pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert waits_expire() == 1
    assert _wait(ask).status == WaitStatus.EXPIRED
    locked = Event.objects.filter(conversation=external, name="card_locked").get()
    assert locked.data == {"kind": "toy", "message_id": ask.pk, "reason": "expired"}
    page = _page(client_in, external)
    assert "Ended: expired" in page and 'data-card-state="t"' not in page
    registry.input_refuse_if_waiting(conversation=external)  # it holds nothing any more


def test_stop_ends_a_toy_card_through_its_kind(toy_registered, client_in, external):
    run = Run.objects.create(conversation=external, status=RunStatus.RUNNING)
    ask = toy_ask(conversation=external, question="Which one?", run=run)
    assert run_waits_end(run) == 1
    assert _wait(ask).status == WaitStatus.CANCELLED
    locked = Event.objects.filter(conversation=external, name="card_locked").get()
    assert locked.data == {"kind": "toy", "message_id": ask.pk, "reason": "stopped"}
    assert "Ended: stopped" in _page(client_in, external)


def test_the_toy_is_counted_in_analytics_under_its_own_kind(
    toy_registered, client_in, external, admin_client
):
    answered = toy_ask(conversation=external, question="Which one?")
    client_in.post(f"/conversations/{external.pk}/toys/{answered.pk}", {"text": "a kite"})
    expired = toy_ask(conversation=external, question="Which one?")
    Wait.objects.filter(pk=_wait(expired).pk).update(deadline=timezone.now())
    waits_expire()
    analytics_refresh(now=timezone.now() + timedelta(minutes=5))
    definition = CardDefinition.objects.get(kind="toy")
    assert (definition.shown_count, definition.answered_count, definition.expired_count) == (
        2,
        1,
        1,
    )
    assert definition.kind_label == "Toy"
    assert CardDefinition.objects.count() == 1  # its card messages are nobody else's
    csv = admin_client.get("/admin/questionnaires/carddefinition/csv/?kind=toy")
    assert csv.status_code == 200 and "Which one?" in csv.content.decode()


def test_a_wait_of_an_unregistered_kind_is_refused_and_nothing_is_stored(external):
    with pytest.raises(ImproperlyConfigured):
        registry.wait_open(kind="toy", conversation=external, ref="toy:1", seconds=60)
    assert not Wait.objects.exists()


def test_a_kind_name_must_fit_the_wait_and_analytics_columns(settings):
    settings.QUESTIONNAIRE_KINDS = ["tests.questionnaires.test_registry.TWIN_long"]
    with pytest.raises(ImproperlyConfigured):
        registry.kinds()


TWIN_long = _twin(name="a_name_too_long", draft_prefix="long")


def test_manage_py_check_reports_a_kind_hook_that_does_not_load(settings):
    from questionnaires.apps import kinds_check

    settings.QUESTIONNAIRE_KINDS = [TOY, "tests.questionnaires.test_registry.TWIN_hooks"]
    errors = kinds_check()
    assert [e.id for e in errors] == ["questionnaires.E002", "questionnaires.E002"]
    assert "twin.analytics" in errors[0].msg and "twin.admin" in errors[1].msg


TWIN_hooks = _twin(
    name="twin",
    draft_prefix="twin",
    analytics="tests.support.toy_kind.kind",  # no SOURCE
    admin="tests.support.toy_kind.nowhere",
)

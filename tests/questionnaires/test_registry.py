"""The kind registry: a fifth kind, registered from the test tree (tests/support/toy_kind),
renders, keeps a draft, holds the conversation while it waits and is answered — with no
line of the product changed. And the registry refuses a broken list of kinds."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from chat.agent.context import context_messages
from chat.core.errors import ChatError
from chat.core.models import Message
from chat.core.services import conversation_create
from questionnaires import registry
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
    ask = toy_ask(conversation=external, question="Which one?")
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

"""Card drafts: what a person typed into an open card survives a reload and another tab,
and is gone once the card is answered."""

from __future__ import annotations

import pytest

from questionnaires.drafts import CardDraft
from tests.questionnaires.forms.conftest import open_form
from tests.questionnaires.inline.conftest import TRIP
from tests.questionnaires.protocol.test_ask_payload import SPEC_PAYLOAD

pytestmark = pytest.mark.django_db


@pytest.fixture
def card(conversation):
    from chat.core.services import message_create

    message_create(conversation=conversation, role="user", content="Plan my trip")
    return message_create(conversation=conversation, role="assistant", content=TRIP)


def _save(client, conversation, key, fields):
    return client.post(f"/conversations/{conversation.pk}/drafts", {"card_key": key, **fields})


def test_an_inline_card_shows_its_draft_after_a_reload_and_loses_it_on_submit(
    client_in, conversation, card
):
    qid = f"{card.pk}_q1"
    fields = {"answer-1": "__questionnaire_other__", "other-1": "Lisbon, by the sea"}
    assert _save(client_in, conversation, f"q:{qid}", fields).status_code == 204
    page = client_in.get(f"/conversations/{conversation.pk}/").content.decode()
    assert 'value="Lisbon, by the sea"' in page
    response = client_in.post(
        f"/conversations/{conversation.pk}/messages/{card.pk}/answer",
        {"questionnaire_id": qid, **fields, "answer-2": "Train", "answer-3": ""},
    )
    assert response.status_code == 302
    assert not CardDraft.objects.exists()


def test_a_pending_form_shows_its_draft(client_in, conversation):
    message, result = open_form(conversation)
    assert result["success"] is True
    _save(client_in, conversation, f"form:{result['ask_id']}", {"answer-name": "Ann Smith"})
    page = client_in.get(f"/conversations/{conversation.pk}/").content.decode()
    assert 'value="Ann Smith"' in page


def test_an_ask_shows_the_typed_text_again(client_in, user):
    from chat.core.services import conversation_create
    from questionnaires.asks.services import ask_create

    conversation = conversation_create(owner=user, agent="external")
    ask = ask_create(conversation=conversation, payload=SPEC_PAYLOAD, turn_id="t1")
    _save(client_in, conversation, f"ask:{ask.pk}", {"text": "only when I climb stairs"})
    page = client_in.get(f"/conversations/{conversation.pk}/").content.decode()
    assert "only when I climb stairs" in page
    client_in.post(
        f"/conversations/{conversation.pk}/asks/{ask.pk}/answer",
        {"action": "free_text", "text": "only when I climb stairs"},
    )
    assert not CardDraft.objects.exists()


def test_drafts_are_private_and_bounded(client, client_in, other_user, conversation):
    assert _save(client_in, conversation, "nonsense", {"answer-1": "x"}).status_code == 400
    big = {"other-1": "x" * 60_000}
    assert _save(client_in, conversation, "q:1_q1", big).status_code == 413
    client.force_login(other_user)
    assert _save(client, conversation, "q:1_q1", {"answer-1": "x"}).status_code == 404
    assert not CardDraft.objects.exists()

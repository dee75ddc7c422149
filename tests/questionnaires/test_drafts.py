"""Card drafts: what a person typed into an open card survives a reload and another tab,
and is gone once the card is answered."""

from __future__ import annotations

import pytest

from questionnaires.drafts import CardDraft
from tests.support.asking import SPEC_PAYLOAD, TRIP, open_form

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


def _raw(client, conversation, body: str):
    return client.post(
        f"/conversations/{conversation.pk}/drafts",
        body,
        content_type="application/x-www-form-urlencoded",
    )


def test_hostile_drafts_cannot_grow_the_database(client_in, conversation, card):
    """Issue 22: 41 requests of ~2.2 MB (long field names, made-up card keys) grew the
    database by 88 MB. Now names count against the limit, and only an open card of one's
    own conversation keeps a draft: every such request is refused, nothing is stored."""
    from urllib.parse import urlencode

    from django.db.models import Sum
    from django.db.models.functions import Length

    qid = f"{card.pk}_q1"
    kept = {"answer-1": "Lisbon"}
    assert _save(client_in, conversation, f"q:{qid}", kept).status_code == 204
    before = CardDraft.objects.get().fields
    names = urlencode({f"answer-{n}-" + "n" * 11_000: "" for n in range(200)})  # ~2.2 MB
    keys = [f"q:{qid}", "q:1_q1", f"q:{card.pk}_q9", "form:ask_made_up", "ask:99999", "elic:7"]
    keys += [f"q:{n}_q{n}" for n in range(35)]  # 41 in all, the real card first
    codes = set()
    for key in keys:
        response = _raw(client_in, conversation, f"{urlencode({'card_key': key})}&{names}")
        assert 400 <= response.status_code < 500
        codes.add((response.status_code, response["X-Error-Code"]))
    assert codes == {(413, "draft_too_large")}  # size first: nothing is even looked up
    small = {"answer-1": "x"}
    for key in keys[1:]:
        response = _save(client_in, conversation, key, small)
        assert response["X-Error-Code"] in ("draft_invalid", "draft_card_not_found")
    assert CardDraft.objects.count() == 1 and CardDraft.objects.get().fields == before
    size = CardDraft.objects.aggregate(n=Sum(Length("card")))["n"]
    assert size == len(f"q:{qid}")


def test_a_draft_counts_field_names_and_keeps_the_last_good_one(client_in, conversation, card):
    qid = f"{card.pk}_q1"
    assert _save(client_in, conversation, f"q:{qid}", {"answer-1": "ok"}).status_code == 204
    from urllib.parse import urlencode

    long_name = urlencode({"card_key": f"q:{qid}", "answer-" + "n" * 50_000: "x"})
    refused = _raw(client_in, conversation, long_name)
    assert refused.status_code == 413 and refused["X-Error-Code"] == "draft_too_large"
    too_many = {f"answer-{n}": "x" for n in range(201)}
    assert _save(client_in, conversation, f"q:{qid}", too_many).status_code == 413
    assert CardDraft.objects.get().fields == {"answer-1": ["ok"]}


def test_an_answered_or_superseded_card_keeps_no_draft(client_in, conversation, card):
    from chat.core.services import message_create

    qid = f"{card.pk}_q1"
    message_create(conversation=conversation, role="user", content="Never mind")
    response = _save(client_in, conversation, f"q:{qid}", {"answer-1": "x"})
    assert response.status_code == 404 and response["X-Error-Code"] == "draft_card_not_found"
    assert not CardDraft.objects.exists()

"""Issue 27 on asks: provenance in structured answers, "Change answer" (exactly once per
version), and the slot history with `source: user_edit`."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from chat.core.errors import ChatError
from chat.core.models import Message
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.services import ask_answer, ask_answer_change

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def first_answer(external, ask):
    row, _created = ask_answer(
        conversation=external,
        answer={"field": "pain_level", "turn_id": "turn_1", "value": "mild"},
        ask_message=ask,
    )
    return row


def test_answers_say_how_they_came_to_be(external, make_ask):
    ask = make_ask()
    row = first_answer(external, ask)
    assert json.loads(row.user_message.content)["provenance"] == "chosen"
    skipped = make_ask(
        {"question": "Swelling?", "field": "swelling", "options": []}
        | {"options": [{"label": "Yes", "value": "y"}, {"label": "No", "value": "n"}]},
        turn_id="turn_2",
    )
    row, _ = ask_answer(
        conversation=external,
        answer={"field": "swelling", "turn_id": "turn_2", "source": "user_skipped"},
        ask_message=skipped,
    )
    assert json.loads(row.user_message.content)["provenance"] == "skipped"


def test_a_change_amends_the_answer_and_records_user_edit_history(external, make_ask):
    ask = make_ask()
    row = first_answer(external, ask)
    change = ask_answer_change(
        conversation=external,
        ask_message=ask,
        version=row.pk,
        source="user_option_click",
        value="severe",
    )
    envelope = json.loads(change.user_message.content)
    assert envelope["source"] == "user_edit" and envelope["provenance"] == "amended"
    assert envelope["amends"] == row.user_message_id and envelope["value"] == "severe"
    assert change.user_message.display_content.endswith("明显疼痛 (was: 轻微疼痛)")
    external.refresh_from_db()
    assert external.state["consultation_state"]["pain_level"] == "severe"
    history = external.state["history"]["pain_level"]
    assert [h["source"] for h in history] == ["user_option_click", "user_edit"]
    assert [h["provenance"] for h in history] == ["chosen", "amended"]


def test_a_stale_or_empty_change_is_refused_and_changes_nothing(external, make_ask):
    ask = make_ask()
    row = first_answer(external, ask)
    ask_answer_change(
        conversation=external,
        ask_message=ask,
        version=row.pk,
        source="user_option_click",
        value="severe",
    )
    before = Message.objects.count()
    with pytest.raises(ChatError) as stale:
        ask_answer_change(
            conversation=external,
            ask_message=ask,
            version=row.pk,
            source="user_option_click",
            value="none",
        )
    assert stale.value.code == "questionnaire_version_stale" and stale.value.status == 409
    assert "it is now “明显疼痛”" in stale.value.message  # the answer that counts
    latest = StructuredAnswer.objects.order_by("-id").first()
    with pytest.raises(ChatError) as same:
        ask_answer_change(
            conversation=external,
            ask_message=ask,
            version=latest.pk,
            source="user_option_click",
            value="severe",
        )
    assert same.value.code == "answer_unchanged"
    assert Message.objects.count() == before and StructuredAnswer.objects.count() == 2


def test_change_over_htmx_and_by_another_user(client_in, external, make_ask, other_user):
    ask = make_ask()
    row = first_answer(external, ask)
    page = client_in.get(f"/conversations/{external.pk}/").content.decode()
    assert "Change answer" in page and f'data-card-state="v{row.pk}"' in page
    url = f"/conversations/{external.pk}/asks/{ask.pk}/change"
    mallory = Client()
    mallory.force_login(other_user)
    assert mallory.post(url, {"version": row.pk, "value": "none"}).status_code == 404
    response = client_in.post(url, {"version": row.pk, "value": "none"}, **HX)
    assert response.status_code == 200 and "Changed" in response.content.decode()
    stale = client_in.post(url, {"version": row.pk, "value": "severe"}, **HX)
    assert stale.status_code == 409
    bad = client_in.post(url, {"version": "x", "value": "severe"}, **HX)
    assert bad.status_code == 400
    typed = client_in.post(
        url,
        {
            "version": StructuredAnswer.objects.order_by("-id").first().pk,
            "action": "free_text",
            "text": "it hurts a lot",
        },
        **HX,
    )
    assert typed.status_code == 200
    assert StructuredAnswer.objects.order_by("-id").first().raw_text == "it hurts a lot"


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "no-js"])
def test_a_refused_change_keeps_the_card_open_with_the_typed_text(
    client_in, external, make_ask, htmx
):
    ask = make_ask()
    row = first_answer(external, ask)
    url = f"/conversations/{external.pk}/asks/{ask.pk}/change"
    assert client_in.post(url, {"version": row.pk, "value": "none"}, **HX).status_code == 200
    # This tab still shows the first version: its typed change is refused as stale.
    typed = {"version": row.pk, "action": "free_text", "text": "it hurts a <b>lot</b>"}
    refused = client_in.post(url, typed, **(HX if htmx else {}))
    assert refused.status_code == 409
    html = refused.content.decode()
    card = html[html.index(f'id="ask-{ask.pk}"') :]
    assert card.index('<details class="qcard-fold" open>') < card.index("</section>")
    assert '<details class="ask-change" open>' in card
    assert 'value="it hurts a &lt;b&gt;lot&lt;/b&gt;"' in card  # kept, escaped
    assert 'role="alert"' in card  # with the reason
    assert StructuredAnswer.objects.order_by("-id").first().raw_text == ""  # nothing stored


def test_a_stale_tab_keeps_its_typed_answer_but_a_stale_click_folds(client_in, external, make_ask):
    ask = make_ask()
    first_answer(external, ask)  # another tab answered first
    url = f"/conversations/{external.pk}/asks/{ask.pk}/answer"
    typed = client_in.post(url, {"action": "free_text", "text": "mostly at night"}, **HX)
    html = typed.content.decode()
    assert typed.status_code == 409 and 'role="alert"' in html
    assert '<details class="ask-change" open>' in html and 'value="mostly at night"' in html
    clicked = client_in.post(url, {"value": "severe"}, **HX).content.decode()
    assert '<details class="qcard-fold">' in clicked and 'role="alert"' in clicked
    assert '<details class="ask-change">' in clicked  # nothing typed: it stays closed


def test_change_over_the_json_api(api, external, make_ask):
    make_ask()
    url = f"/api/v1/conversations/{external.pk}/answers"
    body = {"field": "pain_level", "turn_id": "turn_1", "value": "mild"}
    first = api.post(url, body).json()["answer"]
    assert first["provenance"] == "chosen" and first["amends"] is None
    change = api.post(url, {**body, "value": "severe", "version": first["id"]})
    assert change.status_code == 201, change.content
    answer = change.json()["answer"]
    assert answer["provenance"] == "amended" and answer["amends"] == first["id"]
    assert change.json()["consultation_state"] == {"pain_level": "severe"}
    stale = api.post(url, {**body, "value": "none", "version": first["id"]})
    assert stale.status_code == 409 and stale.json()["error"] == "questionnaire_version_stale"
    for bad in ("1", True, 0, None):
        response = api.post(url, {**body, "value": "none", "version": bad})
        assert response.status_code == 400 and response.json()["error"] == "answer_invalid"

"""`POST /api/v1/conversations/{id}/asks`: external runtimes ask structured questions."""

from __future__ import annotations

import json

import pytest

from chat.core.models import Event, Role
from chat.core.services import api_token_create, conversation_create
from questionnaires.asks import selectors
from tests.support.asking import SPEC_PAYLOAD

pytestmark = pytest.mark.django_db
REFERENCE = {"title": "Knee guide", "snippet": "Pain level changes the advice."}


def url(conversation):
    return f"/api/v1/conversations/{conversation.pk}/asks"


def test_an_ask_is_created_with_its_intro_and_reference(api, external, client_in):
    body = {"payload": SPEC_PAYLOAD, "reference": REFERENCE, "text": "A few questions first."}
    response = api.post(url(external), body)
    assert response.status_code == 201, response.content
    data = response.json()
    assert set(data) == {"message_id", "turn_id"}
    intro, ask = external.messages.order_by("seq")
    assert (intro.role, intro.content) == (Role.ASSISTANT, "A few questions first.")
    assert ask.pk == data["message_id"] and ask.metadata["turn_id"] == data["turn_id"]
    assert ask.metadata["ask_user_options"]["field"] == "pain_level"
    assert ask.metadata["knowledge_reference"]["title"] == "Knee guide"
    assert selectors.ask_pending(conversation=external) == [ask]
    names = list(Event.objects.filter(conversation=external).values_list("name", flat=True))
    assert "ask_user_options" in names and "knowledge_reference" in names
    assert "error" not in names
    html = client_in.get(f"/conversations/{external.pk}/").content.decode()
    assert f'id="ask-{ask.pk}"' in html and 'data-widget="buttons"' in html
    # the answer goes through the existing answers endpoint
    answer = {"field": "pain_level", "value": "mild", "turn_id": data["turn_id"]}
    answered = api.post(f"/api/v1/conversations/{external.pk}/answers", answer)
    assert answered.status_code == 201 and answered.json()["answer"]["display_text"] == "轻微疼痛"


def test_payload_only_and_the_extended_types(api, external):
    for payload in (
        {"type": "scale", "question": "0–10?", "field": "pain", "min": 0, "max": 10},
        {"type": "boolean", "question": "Swelling?", "field": "swelling"},
        {"type": "free_text_only", "question": "Anything else?", "field": "notes"},
    ):
        response = api.post(url(external), {"payload": payload})
        assert response.status_code == 201, response.content
    assert external.messages.count() == 3  # no intro messages


def test_an_invalid_ask_lists_every_problem_and_writes_nothing(api, external):
    body = {
        "payload": {"question": "", "field": "", "options": [{"label": "x", "value": "x"}]},
        "reference": {"title": "T", "url": "ftp://example.com"},
        "text": "Intro that must not be posted alone.",
    }
    response = api.post(url(external), body)
    assert response.status_code == 400
    data = response.json()
    assert data["error"] == "ask_invalid" and data["message"]
    errors = data["details"]["errors"]
    assert [e["code"] for e in errors] == [
        "ask.question_required",
        "ask.field_required",
        "ask.options_too_few",
        "reference.snippet_required",
        "reference.url_invalid",
    ]
    assert [e["path"] for e in errors] == [
        "question",
        "field",
        "options",
        "reference.snippet",
        "reference.url",
    ]
    assert all(e["message"] for e in errors)
    assert external.messages.count() == 0
    assert not Event.objects.filter(conversation=external).exists()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "ask_invalid"),
        ({"payload": "not an object"}, "ask_invalid"),
        ({"payload": SPEC_PAYLOAD, "text": 3}, "ask_text_invalid"),
    ],
)
def test_bad_bodies(api, external, body, code):
    response = api.post(url(external), body)
    assert response.status_code == 400 and response.json()["error"] == code
    assert external.messages.count() == 0


def test_not_json(client, api_token, external):
    response = client.post(
        url(external),
        data="{nope",
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_json"


def test_another_users_conversation_is_not_found(client, other_user, external):
    _token, raw = api_token_create(user=other_user)
    response = client.post(
        url(external),
        data=json.dumps({"payload": SPEC_PAYLOAD}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert external.messages.count() == 0


def test_a_missing_conversation_is_not_found(api):
    response = api.post("/api/v1/conversations/999999/asks", {"payload": SPEC_PAYLOAD})
    assert response.status_code == 404


def test_a_token_is_required(client, external):
    response = client.post(
        url(external), data=json.dumps({"payload": SPEC_PAYLOAD}), content_type="application/json"
    )
    assert response.status_code == 401 and response.json()["error"] == "unauthorized"
    bad = client.post(
        url(external),
        data=json.dumps({"payload": SPEC_PAYLOAD}),
        content_type="application/json",
        headers={"Authorization": "Bearer qc_wrong"},
    )
    assert bad.status_code == 401
    assert external.messages.count() == 0


def test_only_post(api, external):
    assert api.get(url(external)).status_code == 405


def test_an_ask_into_a_built_in_agent_conversation_starts_no_run(api, user):
    conversation = conversation_create(owner=user, agent="scripted")
    response = api.post(url(conversation), {"payload": SPEC_PAYLOAD})
    assert response.status_code == 201
    assert not conversation.runs.exists()

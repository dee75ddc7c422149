from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from chat.core.models import ApiToken, Message

pytestmark = pytest.mark.django_db


def test_create_api_token_prints_a_working_token(user, client):
    out = io.StringIO()
    call_command("create_api_token", "alice", stdout=out)
    raw = out.getvalue().strip()
    assert ApiToken.objects.filter(user=user).count() == 1
    assert raw not in str(list(ApiToken.objects.values())), "only the hash is stored"
    response = client.post(
        "/api/v1/conversations/",
        data="{}",
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 201


def test_create_conversation_contract(api, user):
    response = api.post("/api/v1/conversations/", {"title": "Ext"})
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"id", "url"}
    assert body["url"].endswith(f"/conversations/{body['id']}/")
    assert user.conversations.get(pk=body["id"]).agent == "external"


def test_post_and_list_messages_contract(api):
    cid = api.post("/api/v1/conversations/", {"agent": "external"}).json()["id"]
    r1 = api.post(f"/api/v1/conversations/{cid}/messages", {"role": "user", "content": "Hi"})
    r2 = api.post(
        f"/api/v1/conversations/{cid}/messages",
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}
            ],
        },
    )
    r3 = api.post(
        f"/api/v1/conversations/{cid}/messages",
        {"role": "tool", "content": "{}", "tool_call_id": "c1"},
    )
    r4 = api.post(
        f"/api/v1/conversations/{cid}/messages",
        {"role": "assistant", "content": "Done", "readonly": True},
    )
    assert [r.status_code for r in (r1, r2, r3, r4)] == [201] * 4
    assert [r.json()["seq"] for r in (r1, r2, r3, r4)] == [1, 2, 3, 4]
    assert set(r1.json()) == {"id", "seq"}
    listing = api.get(f"/api/v1/conversations/{cid}/messages").json()["messages"]
    assert [m["role"] for m in listing] == ["user", "assistant", "tool", "assistant"]
    first = listing[0]
    for key in ("id", "seq", "role", "content", "display_content", "segments"):
        assert key in first
    assert first["segments"][0]["kind"] == "markdown"
    assert listing[3]["readonly"] is True
    assert Message.objects.get(pk=r2.json()["id"]).tool_calls[0]["id"] == "c1"


def test_external_conversation_runs_no_agent(api):
    cid = api.post("/api/v1/conversations/", {}).json()["id"]
    api.post(f"/api/v1/conversations/{cid}/messages", {"role": "user", "content": "Hi"})
    roles = [m["role"] for m in api.get(f"/api/v1/conversations/{cid}/messages").json()["messages"]]
    assert roles == ["user"]


def test_user_message_through_api_starts_a_run(api):
    cid = api.post("/api/v1/conversations/", {"agent": "echo"}).json()["id"]
    api.post(f"/api/v1/conversations/{cid}/messages", {"role": "user", "content": "Hi"})
    messages = api.get(f"/api/v1/conversations/{cid}/messages").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"role": "robot", "content": "x"}, "invalid_role"),
        ({"role": "assistant", "content": 5}, "invalid_field"),
        ({"role": "assistant", "content": "x", "tool_calls": "nope"}, "invalid_field"),
        ({"role": "assistant", "content": "x", "readonly": "yes"}, "invalid_field"),
        ({"role": "user", "content": "  "}, "message_empty"),
    ],
)
def test_bad_messages_get_the_error_shape(api, body, code):
    cid = api.post("/api/v1/conversations/", {}).json()["id"]
    response = api.post(f"/api/v1/conversations/{cid}/messages", body)
    assert response.status_code == 400
    assert response.json()["error"] == code
    assert response.json()["message"]


def test_bad_json_and_unknown_agent(api, client, api_token):
    response = client.post(
        "/api/v1/conversations/",
        data="{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_json"
    response = api.post("/api/v1/conversations/", {"agent": "skynet"})
    assert response.status_code == 400 and response.json()["error"] == "agent_invalid"


def test_too_long_message_is_413(api, settings):
    settings.CHAT_MAX_MESSAGE_CHARS = 5
    cid = api.post("/api/v1/conversations/", {}).json()["id"]
    response = api.post(
        f"/api/v1/conversations/{cid}/messages", {"role": "user", "content": "123456"}
    )
    assert response.status_code == 413 and response.json()["error"] == "message_too_long"


def test_auth_errors(client, api):
    assert client.post("/api/v1/conversations/").status_code == 401
    response = client.post("/api/v1/conversations/", headers={"Authorization": "Bearer wrong"})
    assert response.status_code == 401 and response.json()["error"] == "unauthorized"
    assert api.get("/api/v1/conversations/").status_code == 405


def test_other_users_conversation_is_404(api, other_user):
    from chat.core.services import conversation_create

    theirs = conversation_create(owner=other_user, agent="external")
    response = api.get(f"/api/v1/conversations/{theirs.pk}/messages")
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    response = api.post(
        f"/api/v1/conversations/{theirs.pk}/messages", {"role": "assistant", "content": "x"}
    )
    assert response.status_code == 404
    assert not theirs.messages.exists()


def test_api_message_pushes_event(api):
    from chat.core.models import Event

    cid = api.post("/api/v1/conversations/", {}).json()["id"]
    mid = api.post(
        f"/api/v1/conversations/{cid}/messages", {"role": "assistant", "content": "x"}
    ).json()["id"]
    event = Event.objects.get(conversation_id=cid, name="message_done")
    assert event.data["message_id"] == mid

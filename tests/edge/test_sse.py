from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from chat.core.services import event_emit
from chat.edge.sse import conversation_stream, format_event

pytestmark = pytest.mark.django_db(transaction=True)


def _parse(frame: bytes) -> dict:
    fields = {}
    for line in frame.decode().splitlines():
        if line.startswith(":") or not line:
            continue
        key, _, value = line.partition(": ")
        fields[key] = value
    return fields


def test_format_event_is_one_json_data_line():
    frame = format_event(event_id=7, name="text_delta", data={"text": "a\nb", "zh": "中"})
    assert frame == b'id: 7\nevent: text_delta\ndata: {"text":"a\\nb","zh":"\xe4\xb8\xad"}\n\n'


async def _collect(stream, count: int, timeout: float = 5.0) -> list[dict]:
    frames: list[dict] = []

    async def run():
        async for chunk in stream:
            fields = _parse(chunk)
            if "event" in fields:
                frames.append(fields)
                if len(frames) == count:
                    return

    await asyncio.wait_for(run(), timeout)
    return frames


async def test_replay_then_live_then_resume(conversation):
    emit = database_sync_to_async(event_emit)
    first = await emit(conversation_id=conversation.pk, name="run_started", data={"n": 1})
    await emit(conversation_id=conversation.pk, name="text_delta", data={"n": 2})

    stream = conversation_stream(conversation_id=conversation.pk, last_event_id=0, keepalive=0.2)
    replayed = await _collect(stream, 2)
    assert [f["event"] for f in replayed] == ["run_started", "text_delta"]
    # Live: an event emitted from another thread reaches the waiting stream.
    task = asyncio.ensure_future(_collect(stream, 1))
    await asyncio.sleep(0.05)
    await emit(conversation_id=conversation.pk, name="message_done", data={"n": 3})
    live = await task
    assert json.loads(live[0]["data"]) == {"n": 3}
    await stream.aclose()

    # A reconnect with Last-Event-ID gets exactly what it missed, in order.
    resumed = conversation_stream(
        conversation_id=conversation.pk, last_event_id=first.id, keepalive=0.2
    )
    frames = await _collect(resumed, 2)
    assert [json.loads(f["data"])["n"] for f in frames] == [2, 3]
    assert int(frames[0]["id"]) > first.id
    await resumed.aclose()


async def test_keepalive_comment_is_sent(conversation):
    stream = conversation_stream(conversation_id=conversation.pk, last_event_id=0, keepalive=0.05)
    chunks = [await stream.__anext__() for _ in range(2)]
    await stream.aclose()
    assert chunks[1] == b": keep-alive\n\n"


async def test_events_endpoint_requires_owner(async_client, user, other_user, conversation):
    response = await async_client.get(f"/conversations/{conversation.pk}/events")
    assert response.status_code == 401
    await async_client.aforce_login(other_user)
    response = await async_client.get(f"/conversations/{conversation.pk}/events")
    assert response.status_code == 404


async def test_events_endpoint_streams(async_client, user, conversation):
    await database_sync_to_async(event_emit)(
        conversation_id=conversation.pk, name="run_started", data={"run_id": 1}
    )
    await async_client.aforce_login(user)
    response = await async_client.get(f"/conversations/{conversation.pk}/events")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    frames = await _collect(response.streaming_content, 1)
    assert frames[0]["event"] == "run_started"
    await response.streaming_content.aclose()


async def test_api_events_need_bearer_token(async_client, api_token, conversation):
    response = await async_client.get(f"/api/v1/conversations/{conversation.pk}/events")
    assert response.status_code == 401
    response = await async_client.get(
        f"/api/v1/conversations/{conversation.pk}/events",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == 200
    await response.streaming_content.aclose()

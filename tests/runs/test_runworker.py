from __future__ import annotations

import asyncio

from chat.management.commands.runworker import Command, ResilientWorker


class FlakyLayer:
    """Fails the first receive like a Redis read timeout, then delivers one message."""

    def __init__(self) -> None:
        self.calls = 0

    async def receive(self, channel):
        self.calls += 1
        if self.calls == 1:
            raise TimeoutError("Timeout reading from 127.0.0.1:6379")
        if self.calls == 2:
            return {"type": "run.execute", "run_id": 1}
        await asyncio.sleep(3600)


async def test_worker_keeps_listening_after_a_layer_error(monkeypatch):
    monkeypatch.setattr("chat.management.commands.runworker.RETRY_SECONDS", 0.01)
    received = []

    async def app(scope, receive, send):
        received.append(await receive())

    worker = ResilientWorker(application=app, channels=["agent-runs"], channel_layer=FlakyLayer())
    task = asyncio.ensure_future(worker.listener("agent-runs"))
    for _ in range(100):
        if received:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    assert received == [{"type": "run.execute", "run_id": 1}]


def test_our_runworker_command_is_the_one_django_finds():
    from django.core.management import get_commands, load_command_class

    command = load_command_class(get_commands()["runworker"], "runworker")
    assert isinstance(command, Command)

"""Many signed-in clients posting at the same instant (the exactly-once tests, on
PostgreSQL): one thread and one `Client` each, released together by a barrier."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections
from django.test import Client


def at_once(user: Any, count: int, send: Callable[[int, Client], Any]) -> list[Any]:
    """`send(n, client)` from `count` threads at once; their responses (in finishing
    order). Anything a thread raised is raised here; each thread closes its connections."""
    clients = []
    for _ in range(count):
        client = Client()
        client.force_login(user)
        clients.append(client)
    barrier = threading.Barrier(count)
    responses: list[Any] = []
    errors: list[BaseException] = []

    def run(n: int, client: Client) -> None:
        try:
            barrier.wait()
            responses.append(send(n, client))
        except BaseException as exc:  # noqa: BLE001 - raised below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n, c)) for n, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if errors:
        raise errors[0]
    return responses

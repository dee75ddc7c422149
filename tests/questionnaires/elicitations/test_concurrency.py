"""Twenty concurrent submits for one elicitation card record exactly one answer.

Real concurrency needs a real database server: runs against PostgreSQL when DATABASE_URL
points at it, and is skipped (or fails under REQUIRE_SERVICES=1) otherwise.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connections
from django.test import Client
from django.urls import reverse

from questionnaires.models import Elicitation
from tests.support.asking import open_elicitation

pytestmark = [pytest.mark.postgres]
THREADS = 20


def test_twenty_concurrent_submits_record_one_answer(
    postgres_only, transactional_db, user, conversation
):
    row = open_elicitation(conversation)
    url = reverse("chat:elicitation_answer", args=[conversation.pk, row.pk])
    clients = []
    for _ in range(THREADS):
        client = Client()
        client.force_login(user)
        clients.append(client)
    barrier = threading.Barrier(THREADS)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def post(n: int, client: Client) -> None:
        try:
            barrier.wait()
            body = {"action": "accept", "answer-name": f"n{n}", "answer-age": str(n)}
            response = client.post(url, body, headers={"HX-Request": "true"})
            statuses.append(response.status_code)
            if response.status_code == 409:
                assert "already answered" in response.content.decode()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(n, c)) for n, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert Counter(statuses) == {200: 1, 409: THREADS - 1}
    stored = Elicitation.objects.get()
    assert stored.status == "accepted" and stored.content["name"] == f"n{stored.content['age']}"

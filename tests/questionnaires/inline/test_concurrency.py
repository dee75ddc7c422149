"""Twenty concurrent submits for one card create exactly one user message.

Real concurrency needs a real database server: this runs against PostgreSQL when
DATABASE_URL points at it, and is skipped (or fails under REQUIRE_SERVICES=1) otherwise.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connections
from django.test import Client
from django.urls import reverse

from chat.core.models import Message
from questionnaires.models import Submission

pytestmark = [pytest.mark.postgres]
THREADS = 20


def test_twenty_concurrent_submits_create_one_answer(
    postgres_only, transactional_db, user, card_message
):
    url = reverse("chat:questionnaire_submit", args=[card_message.conversation_id, card_message.pk])
    body = {
        "questionnaire_id": f"{card_message.pk}_q1",
        "answers": {"q1": "Rome", "q2": [], "q3": ""},
    }
    clients = []
    for _ in range(THREADS):
        client = Client()
        client.force_login(user)
        clients.append(client)
    barrier = threading.Barrier(THREADS)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def post(client: Client) -> None:
        try:
            barrier.wait()
            response = client.post(url, body, content_type="application/json")
            statuses.append(response.status_code)
            if response.status_code != 201:
                assert response.json()["error"] == "questionnaire_already_submitted"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert Counter(statuses) == {201: 1, 409: THREADS - 1}
    answers = Message.objects.filter(
        conversation_id=card_message.conversation_id,
        role="user",
        content__startswith="<questionnaire-response>",
    )
    assert answers.count() == 1
    assert Submission.objects.count() == 1


def test_ten_concurrent_changes_of_one_version_make_one_change(
    postgres_only, transactional_db, user, card_message
):
    """Issue 27: "Change answer" is exactly once per version, like a first answer."""
    url = reverse("chat:questionnaire_submit", args=[card_message.conversation_id, card_message.pk])
    qid = f"{card_message.pk}_q1"
    first = Client()
    first.force_login(user)
    body = {"questionnaire_id": qid, "answers": {"q1": "Rome", "q2": [], "q3": ""}}
    assert first.post(url, body, content_type="application/json").status_code == 201
    threads_n = 10
    clients = []
    for _ in range(threads_n):
        client = Client()
        client.force_login(user)
        clients.append(client)
    barrier = threading.Barrier(threads_n)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def post(n: int, client: Client) -> None:
        try:
            barrier.wait()
            change = {**body, "version": 1, "answers": {"q1": "Paris", "q2": [], "q3": str(n)}}
            response = client.post(url, change, content_type="application/json")
            statuses.append(response.status_code)
            if response.status_code != 201:
                assert response.json()["error"] == "questionnaire_version_stale"
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
    assert Counter(statuses) == {201: 1, 409: threads_n - 1}
    assert sorted(Submission.objects.values_list("version", flat=True)) == [1, 2]

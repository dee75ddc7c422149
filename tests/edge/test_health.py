from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_healthz_reports_database_and_layer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["checks"]["database"]["ok"] and body["checks"]["channel_layer"]["ok"]


def test_healthz_fails_when_layer_is_broken(client, settings):
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "tests.support.BrokenLayer"}}
    channel_layers.backends.clear()
    try:
        response = client.get("/healthz")
    finally:
        channel_layers.backends.clear()
    assert response.status_code == 503
    assert response.json()["checks"]["channel_layer"]["ok"] is False


def test_livez_touches_nothing(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/livez")
    assert response.status_code == 200 and response.content == b"ok"

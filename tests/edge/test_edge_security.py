"""The edges: headers on every page, throttled guessing, quiet bad hosts, MCP host rules."""

from __future__ import annotations

import logging

import pytest

pytestmark = pytest.mark.django_db


def test_pages_carry_a_strict_csp_and_no_store(client_in, conversation):
    response = client_in.get(f"/conversations/{conversation.pk}/")
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-eval" not in csp
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    assert "no-store" in response["Cache-Control"]


def test_repeated_failed_logins_lock_the_account_out(client, user):
    for _ in range(5):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    locked = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice-123"})
    assert locked.status_code == 429  # django-axes: even the right password waits now
    assert "_auth_user_id" not in client.session


def test_a_good_login_still_works(client, user):
    response = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice-123"})
    assert response.status_code == 302


def test_bad_tokens_are_throttled_per_address(client, settings, api_token):
    settings.BAD_TOKEN_LIMIT_PER_MINUTE = 3
    bad = {"Authorization": "Bearer qc_guess"}
    codes = [
        client.get("/api/v1/conversations/1/messages", headers=bad).status_code for _ in range(4)
    ]
    assert codes == [401, 401, 401, 429]
    refused = client.get("/api/v1/conversations/1/messages", headers=bad)
    assert refused.json()["error"] == "too_many_attempts" and refused["Retry-After"] == "60"


def test_a_bad_host_is_one_warning_line(client, caplog):
    with caplog.at_level(logging.WARNING, logger="django.security.DisallowedHost"):
        response = client.get("/", headers={"Host": "evil.example"})
    assert response.status_code == 400
    records = [r for r in caplog.records if r.name == "django.security.DisallowedHost"]
    assert records and all(r.levelname == "WARNING" and not r.exc_info for r in records)


@pytest.mark.parametrize(
    ("host", "origin", "allowed"),
    [
        ("127.0.0.1:8000", "", True),
        ("localhost", "http://localhost:8000", True),
        ("evil.example", "", False),
        ("127.0.0.1:8000", "http://evil.example", False),
        ("", "", False),
    ],
)
def test_mcp_applies_allowed_hosts_to_host_and_origin(host, origin, allowed):
    from chat.edge.mcp import _host_allowed

    headers = {b"host": host.encode()}
    if origin:
        headers[b"origin"] = origin.encode()
    assert _host_allowed(headers) is allowed


def test_mcp_turns_on_the_sdk_rebinding_protection_with_the_same_hosts(settings):
    from chat.edge.mcp import _transport_security

    settings.ALLOWED_HOSTS = ["chat.example.com"]
    security = _transport_security()
    assert security.enable_dns_rebinding_protection
    assert "chat.example.com:*" in security.allowed_hosts
    assert "https://chat.example.com" in security.allowed_origins

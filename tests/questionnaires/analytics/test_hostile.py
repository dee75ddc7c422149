"""Hostile query strings on the analytics pages: a 4xx or an empty answer, never a 500."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

LIST = "/admin/questionnaires/carddefinition/"


@pytest.fixture
def staff(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-1")
    client.force_login(admin)
    return client


@pytest.mark.parametrize(
    "query",
    [
        {"q": "\x00"},
        {"q": "x" * 5000},
        {"o": "99"},
        {"o": "-4.x"},
        {"kind": "\x00"},
        {"kind": "inline\x00"},
        {"kind__exact": "nope"},
        {"p": "-1"},
    ],
)
def test_hostile_list_queries_never_fail(staff, query):
    assert staff.get(LIST, query).status_code < 500
    assert staff.get(f"{LIST}csv/", query).status_code < 500


def test_an_unknown_kind_in_the_csv_is_a_400_with_a_code(staff):
    response = staff.get(f"{LIST}csv/", {"kind": "\x00"})
    assert response.status_code == 400
    assert response["X-Error-Code"] == "kind_invalid"
    assert "inline" in response.content.decode()


def test_a_nul_in_the_list_query_is_a_400(staff):
    response = staff.get(LIST, {"kind": "inline\x00"})
    assert response.status_code == 400
    assert response["X-Error-Code"] == "text_invalid"

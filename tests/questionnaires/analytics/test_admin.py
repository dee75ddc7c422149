"""Questionnaire analytics in admin: the list, a definition's report with its charts and
both CSV exports for staff; nothing for anyone else; and a list page whose query count
doesn't grow with the number of definitions."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from questionnaires.analytics.models import CardDefinition, DefinitionQuestion
from questionnaires.analytics.refresh import analytics_refresh
from tests.support.analytics import LATER

pytestmark = pytest.mark.django_db

LIST = "/admin/questionnaires/carddefinition/"


@pytest.fixture
def staff(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-1")
    client.force_login(admin)
    return client


@pytest.fixture
def report(trips):
    analytics_refresh(now=LATER)
    return CardDefinition.objects.get()


def _rows(response) -> list[list[str]]:
    text = b"".join(response.streaming_content if response.streaming else [response.content])
    return list(csv.reader(io.StringIO(text.decode("utf-8-sig"))))


def test_staff_sees_the_list_sorted_and_the_report_with_its_charts(staff, report):
    page = staff.get(LIST, {"o": "-4"})  # sorted by the answered share
    assert page.status_code == 200
    html = page.content.decode()
    assert "Trip plan" in html and "2 (40.0 %)" in html  # answered 2 of 5
    assert "20 s" in html  # the median
    detail = staff.get(f"{LIST}{report.pk}/change/")
    assert detail.status_code == 200
    html = detail.content.decode()
    assert html.count('<figure class="analytics-chart">\n  <svg') == 2  # outcomes, questions
    assert 'class="bar-skipped"' in html and 'class="bar-other"' in html
    assert " style=" not in html.split('id="content-main"')[1]  # the CSP's spirit: classes
    assert "Where to?" in html and "1 (50.0 %)" in html  # "Other" for Q1 once of two
    assert "css/analytics.css" in html


def test_the_report_is_translated(staff, report):
    html = staff.get(f"{LIST}{report.pk}/change/", HTTP_ACCEPT_LANGUAGE="zh-hans").content
    text = html.decode()
    assert "结果" in text and "跳过" in text


def test_csv_exports(staff, report):
    rows = _rows(staff.get(f"{LIST}csv/"))
    assert rows[0][:4] == ["id", "kind", "title", "source"]
    header = rows[0]
    line = dict(zip(header, rows[1], strict=True))
    assert (line["title"], line["shown"], line["answered"], line["expired"]) == (
        "Trip plan",
        "5",
        "2",
        "1",
    )
    assert line["answer_rate"] == "0.4000" and line["median_seconds_to_answer"] == "20.0"
    assert _rows(staff.get(f"{LIST}csv/", {"kind": "ask"})) == [header]
    questions = _rows(staff.get(f"{LIST}{report.pk}/questions.csv"))
    assert questions[0][:3] == ["definition_id", "position", "question_id"]
    assert [(r[2], r[6], r[8]) for r in questions[1:]] == [
        ("q1", "0", "1"),
        ("q2", "1", "0"),
        ("q3", "1", ""),
    ]


def test_a_formula_in_a_title_is_not_a_formula_in_the_csv(staff, report):
    CardDefinition.objects.filter(pk=report.pk).update(title="=HYPERLINK(1)")
    rows = _rows(staff.get(f"{LIST}csv/"))
    assert rows[1][2] == "'=HYPERLINK(1)"


def test_refresh_now_is_a_post(staff, trips):
    assert staff.get(f"{LIST}refresh/").status_code == 405
    response = staff.post(f"{LIST}refresh/")
    assert response.status_code == 302
    assert CardDefinition.objects.exists()


def test_nobody_else_gets_anything(client, django_user_model, report):
    urls = [LIST, f"{LIST}{report.pk}/change/", f"{LIST}csv/", f"{LIST}{report.pk}/questions.csv"]
    for url in urls:  # signed out: the admin login
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    person = django_user_model.objects.create_user("bob", password="pw-bob-12345")
    client.force_login(person)
    for url in urls:  # not staff: the admin login too
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    staff_member = django_user_model.objects.create_user(
        "carol", password="pw-carol-1234", is_staff=True
    )
    client.force_login(staff_member)
    for url in urls:  # staff without the permission: 403
        assert client.get(url).status_code == 403, url
    assert client.post(f"{LIST}refresh/").status_code == 403
    staff_member.user_permissions.add(Permission.objects.get(codename="view_carddefinition"))
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_bad_ids_are_404(staff, report):
    assert staff.get(f"{LIST}{report.pk + 99}/change/").status_code == 404
    assert staff.get(f"{LIST}{report.pk + 99}/questions.csv").status_code == 404
    assert staff.get(f"{LIST}abc/change/").status_code in (302, 404)


def _definitions(n: int) -> None:
    now = timezone.now()
    rows = CardDefinition.objects.bulk_create(
        CardDefinition(
            kind="inline",
            fingerprint=f"{n}-{i}",
            title=f"Definition {i}",
            shown_count=10 + i,
            answered_count=i,
            median_seconds=float(i),
            last_shown=now - timedelta(minutes=i),
        )
        for i in range(n)
    )
    DefinitionQuestion.objects.bulk_create(
        DefinitionQuestion(definition=d, position=0, question_id="q1") for d in rows
    )


def _queries(client, **params) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(LIST, params).status_code == 200
    return len(queries)


def test_the_list_page_costs_the_same_few_queries_for_3_or_60_definitions(staff):
    _definitions(3)
    few = _queries(staff, o="5")
    _definitions(60)
    many = _queries(staff, o="5")
    assert many == few
    assert many <= 12  # session, user, count, page, last refresh, filters


def test_without_a_beat_the_pages_refresh_stale_numbers_as_they_open(
    staff, trips, settings, monkeypatch
):
    """`make run` has no Celery beat: opening the list (or a report) brings numbers older
    than ANALYTICS_REFRESH_SECONDS up to date; fresher ones are shown as they are."""
    from questionnaires.analytics import admin as analytics_admin

    settings.ANALYTICS_REFRESH_ON_VIEW = True
    settings.ANALYTICS_REFRESH_SECONDS = 60
    calls = []
    monkeypatch.setattr(
        analytics_admin,
        "analytics_refresh",
        lambda **kwargs: calls.append(kwargs) or analytics_refresh(**kwargs),
    )
    page = staff.get(LIST)  # never refreshed: it reads the cards first
    assert "Trip plan" in page.content.decode()
    assert calls == [{"budget": analytics_admin.VIEW_REFRESH_BUDGET_SECONDS}]
    definition = CardDefinition.objects.get()
    assert staff.get(f"{LIST}{definition.pk}/change/").status_code == 200
    assert len(calls) == 1  # refreshed a moment ago: nothing to do
    later = timezone.now() + timedelta(seconds=61)
    monkeypatch.setattr(analytics_admin.timezone, "now", lambda: later)
    assert staff.get(f"{LIST}{definition.pk}/change/").status_code == 200
    assert len(calls) == 2


def test_with_a_beat_opening_a_page_reads_nothing(staff, trips, settings):
    settings.ANALYTICS_REFRESH_ON_VIEW = False
    assert "Trip plan" not in staff.get(LIST).content.decode()
    assert not CardDefinition.objects.exists()

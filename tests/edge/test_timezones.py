"""The person's time zone (issue 33.3): the browser's `tz` cookie is activated per request,
so times show on the person's clock and a typed local time means it; UTC without one."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.http import HttpResponse
from django.template import Context, Template
from django.test import RequestFactory
from django.utils import timezone

from chat.edge.timezones import PersonTimeZoneMiddleware, zone_named


def _seen(cookie: str | None) -> str:
    seen: list[str] = []

    def view(request):  # the time a template shows for 01:30 UTC
        moment = datetime(2026, 12, 4, 1, 30, tzinfo=UTC)
        seen.append(
            Template('{{ t|time:"H:i" }} {{ zone }}').render(
                Context({"t": moment, "zone": timezone.get_current_timezone_name()})
            )
        )
        return HttpResponse()

    request = RequestFactory().get("/")
    if cookie is not None:
        request.COOKIES["tz"] = cookie
    PersonTimeZoneMiddleware(view)(request)
    assert timezone.get_current_timezone_name() == "UTC"  # nothing leaks to the next one
    return seen[0]


def test_a_known_zone_is_the_persons_clock():
    assert _seen("Asia/Shanghai") == "09:30 Asia/Shanghai"
    assert _seen("America/Los_Angeles") == "17:30 America/Los_Angeles"


@pytest.mark.parametrize(
    "cookie",
    [None, "", "Mars/Olympus", "../../etc/passwd", "/etc/localtime", "UTC\x00", "A" * 500],
)
def test_anything_else_is_utc(cookie):
    assert _seen(cookie) == "01:30 UTC"
    assert zone_named(cookie) is None or cookie == "UTC"


def test_every_page_tells_the_server_the_browsers_zone(client, django_user_model):
    user = django_user_model.objects.create_user("tz", password="pw-tz-123")
    client.force_login(user)
    page = client.get("/").content.decode()
    assert "js/timezone.js" in page

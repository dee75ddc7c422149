"""The person's time zone: pages show times in it and read typed local times in it.

The browser says its IANA zone (`Intl.DateTimeFormat().resolvedOptions().timeZone`) in
the `tz` cookie (static/js/timezone.js, on every page); each request activates it, so
Django's template filters, `timezone.localtime()` and a `datetime-local` answer all mean
the person's own clock (a browser in Asia/Shanghai typing 09:30 answers
`09:30:00+08:00`, not `+00:00`). Without JavaScript, or with a name this machine's zone
database doesn't know, it is UTC, and the forms that read a local time say so.
"""

from __future__ import annotations

import functools
import zoneinfo
from collections.abc import Callable
from datetime import tzinfo

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

COOKIE = "tz"


@functools.cache
def _known() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def zone_named(name: str | None) -> tzinfo | None:
    """The zone of an IANA name this machine knows (None for anything else: the name is
    the client's, so it is looked up in the known set, never used as a path)."""
    if not name or len(name) > 64 or name not in _known():
        return None
    return zoneinfo.ZoneInfo(name)


class PersonTimeZoneMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = zone_named(request.COOKIES.get(COOKIE))
        if zone is None:
            timezone.deactivate()
            return self.get_response(request)
        timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()

"""`/metrics`: the Prometheus text format, for a scraper holding `METRICS_TOKEN`.

Never public: without `METRICS_TOKEN` the URL is a 404 (serve the metrics on a port of
their own with `METRICS_BIND` instead, see `manage.py serve`); a request without the
token, or with another, gets 401 `unauthorized` and counts towards the bad-token throttle
like any other bearer token (429 past BAD_TOKEN_LIMIT_PER_MINUTE).

Besides what every process records (chat.obs.metrics), a scrape reads the open waits
from the database (`WaitsCollector`): one grouped query on the open-waits index.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, Min
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from chat.core.models import MCP_CALL_WAIT, Wait, WaitStatus
from chat.edge.http import bad_token_strike, bearer_token, client_address, error_response
from chat.obs.metrics import CONTENT_TYPE, ScrapeRegistry, exposition
from questionnaires import registry

logger = logging.getLogger(__name__)


class WaitsCollector(Collector):
    """Open waits by kind, at scrape time: how many, the oldest one's age, and how many
    are past their deadline (the reaper closes those within AGENT_REAP_INTERVAL)."""

    def collect(self) -> Iterator[Metric]:
        now = timezone.now()
        try:
            rows = list(
                Wait.objects.filter(status=WaitStatus.OPEN)
                .order_by()
                .values("kind")
                .annotate(n=Count("id"), oldest=Min("created_at"))
            )
            overdue = dict(
                Wait.objects.filter(status=WaitStatus.OPEN, deadline__lte=now)
                .order_by()
                .values("kind")
                .annotate(n=Count("id"))
                .values_list("kind", "n")
            )
        except DatabaseError:
            logger.warning("metrics: could not read the open waits", exc_info=True)
            return
        found = {row["kind"]: row for row in rows}
        open_ = GaugeMetricFamily(
            "chat_waits_open",
            "Open waits (for a person, or the MCP session host).",
            labels=["kind"],
        )
        age = GaugeMetricFamily(
            "chat_waits_oldest_age_seconds", "Age of the oldest open wait.", labels=["kind"]
        )
        late = GaugeMetricFamily(
            "chat_waits_overdue", "Open waits past their deadline.", labels=["kind"]
        )
        # every registered kind (0 when none is open), the session host's, and any other
        for kind in dict.fromkeys([*(k.name for k in registry.kinds()), MCP_CALL_WAIT, *found]):
            row = found.get(kind)
            open_.add_metric([kind], row["n"] if row else 0)
            oldest = (now - row["oldest"]).total_seconds() if row else 0.0
            age.add_metric([kind], max(oldest, 0.0))
            late.add_metric([kind], overdue.get(kind, 0))
        yield open_
        yield age
        yield late


def scrape_registry() -> ScrapeRegistry:
    return ScrapeRegistry(extra=[WaitsCollector()])


def token_ok(raw: str | None) -> bool:
    expected = settings.METRICS_TOKEN
    return bool(raw) and hmac.compare_digest(str(raw).encode(), expected.encode())


@csrf_exempt
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not settings.METRICS_TOKEN:
        raise Http404
    if not token_ok(bearer_token(request)):
        response: HttpResponse = error_response(bad_token_strike(client_address(request)))
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    response = HttpResponse(exposition(scrape_registry()), content_type=CONTENT_TYPE)
    response["Cache-Control"] = "no-store"
    return response

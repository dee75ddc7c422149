"""Questionnaire analytics in admin: the list of definitions (sortable, filterable,
searchable, CSV), one page per definition (outcomes, time to answer, per question, SVG
charts, CSV) and *Refresh now*. Staff with the view permission only (superusers have it);
nothing here can change a definition."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
)
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.text import Truncator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from questionnaires import registry
from questionnaires.analytics.models import CardDefinition
from questionnaires.analytics.refresh import analytics_refresh
from questionnaires.analytics.selectors import (
    csv_safe,
    definition_report,
    definitions_annotated,
    definitions_csv,
    duration,
    last_refreshed,
    percent,
    questions_csv,
)

# How long *Refresh now* reads new rows within a request (a large backlog is the beat's
# or the command's).
REFRESH_BUDGET_SECONDS = 10.0
# How long opening a page may read them when nothing refreshes on a schedule.
VIEW_REFRESH_BUDGET_SECONDS = 2.0


def refresh_when_stale() -> None:
    """With ANALYTICS_REFRESH_ON_VIEW (no Celery beat), numbers older than
    ANALYTICS_REFRESH_SECONDS are brought up to date before a page shows them."""
    if not settings.ANALYTICS_REFRESH_ON_VIEW:
        return
    last = last_refreshed()
    if last is not None and timezone.now() - last < timedelta(
        seconds=settings.ANALYTICS_REFRESH_SECONDS
    ):
        return
    analytics_refresh(budget=VIEW_REFRESH_BUDGET_SECONDS)


def bad_request(code: str, message: str) -> HttpResponse:
    """A refused query string: 400, a stable code in X-Error-Code, the reason as text."""
    response = HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
    response["X-Error-Code"] = code
    return response


def nul_refused(request: HttpRequest) -> HttpResponse | None:
    """A NUL anywhere in the query string (PostgreSQL text can't hold one): 400."""
    if any("\x00" in key or "\x00" in value for key, value in request.GET.items()):
        return bad_request("text_invalid", _("The address contains a NUL character."))
    return None


def csv_response(rows: Iterable[list[object]], filename: str) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.write("\ufeff")  # a BOM: spreadsheets then read UTF-8 (Chinese) correctly
    writer = csv.writer(response)
    for row in rows:
        writer.writerow([csv_safe(value) for value in row])
    return response


class KindFilter(admin.SimpleListFilter):
    """By kind: the registered kinds, by their labels (questionnaires.registry)."""

    title = gettext_lazy("kind")
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: object) -> list[tuple[str, str]]:
        return [(k.name, str(k.label)) for k in registry.kinds()]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[CardDefinition]
    ) -> QuerySet[CardDefinition]:
        return queryset.filter(kind=self.value()) if self.value() else queryset


class CardDefinitionAdmin(admin.ModelAdmin):
    list_display = (
        "title_or_id",
        "kind_shown",
        "shown_count",
        "answered_share",
        "skipped_count",
        "declined_count",
        "abandoned_count",
        "expired_count",
        "median",
        "repaired_share",
        "last_shown",
    )
    list_display_links = ("title_or_id",)
    list_filter = (KindFilter,)
    search_fields = ("title", "source", "fingerprint")
    ordering = ("-last_shown",)
    list_per_page = 50
    show_full_result_count = False  # one count query, not two
    actions = None

    class Media:
        css = {"all": ("css/analytics.css",)}

    # --- view only ---------------------------------------------------------------------

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[CardDefinition]:
        return definitions_annotated(super().get_queryset(request))

    # --- columns ----------------------------------------------------------------------

    @admin.display(description=gettext_lazy("kind"), ordering="kind")
    def kind_shown(self, obj: CardDefinition) -> str:
        return obj.kind_label

    @admin.display(description=gettext_lazy("definition"), ordering="title")
    def title_or_id(self, obj: CardDefinition) -> str:
        title = Truncator(obj.title or obj.fingerprint[:12]).chars(80)
        return f"{title} ({obj.source})" if obj.source and obj.source != obj.title else title

    @admin.display(description=gettext_lazy("answered"), ordering="answer_rate")
    def answered_share(self, obj: CardDefinition) -> str:
        return f"{obj.answered_count} ({percent(obj.answered_count, obj.shown_count)})"

    @admin.display(description=gettext_lazy("median time to answer"), ordering="median_seconds")
    def median(self, obj: CardDefinition) -> str:
        return duration(obj.median_seconds)

    @admin.display(description=gettext_lazy("repaired by self-check"), ordering="repair_rate")
    def repaired_share(self, obj: CardDefinition) -> str:
        return f"{obj.repaired_count} ({percent(obj.repaired_count, obj.shown_count)})"

    # --- pages ------------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view
        return [
            path("csv/", view(self.definitions_csv_view), name="analytics_csv"),
            path("refresh/", view(require_POST(self.refresh_view)), name="analytics_refresh"),
            path(
                "<int:object_id>/questions.csv",
                view(self.questions_csv_view),
                name="analytics_questions_csv",
            ),
            *super().get_urls(),
        ]

    def _viewer(self, request: HttpRequest) -> None:
        if not self.has_view_permission(request):
            raise PermissionDenied

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, object] | None = None
    ) -> HttpResponse:
        refused = nul_refused(request)
        if refused is not None:
            return refused
        if self.has_view_permission(request):
            refresh_when_stale()
        context = {"last_refreshed": last_refreshed(), **(extra_context or {})}
        return super().changelist_view(request, extra_context=context)

    def definitions_csv_view(self, request: HttpRequest) -> HttpResponse:
        """Every definition (of one kind with ?kind=), the list's columns."""
        self._viewer(request)
        queryset = self.get_queryset(request).order_by("-last_shown", "id")
        kind = request.GET.get("kind", "")
        names = [k.name for k in registry.kinds()]
        if kind and kind not in names:
            return bad_request(
                "kind_invalid",
                _("Unknown kind: use one of %(kinds)s.") % {"kinds": ", ".join(names)},
            )
        if kind:
            queryset = queryset.filter(kind=kind)
        return csv_response(definitions_csv(queryset), "questionnaire-analytics.csv")

    def questions_csv_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        self._viewer(request)
        definition = self.get_queryset(request).filter(pk=object_id).first()
        if definition is None:
            raise Http404
        return csv_response(
            questions_csv(definition), f"questionnaire-analytics-{definition.pk}-questions.csv"
        )

    def refresh_view(self, request: HttpRequest) -> HttpResponse:
        self._viewer(request)
        result = analytics_refresh(budget=REFRESH_BUDGET_SECONDS)
        self.message_user(
            request,
            _("Analytics refreshed: %(created)s new cards, %(settled)s settled.")
            % {"created": result.created, "settled": result.settled},
            messages.SUCCESS,
        )
        if result.more:
            self.message_user(
                request,
                _(
                    "More remains to be read: the next refresh goes on (every minute), or "
                    "run “manage.py analytics_refresh”."
                ),
                messages.WARNING,
            )
        return HttpResponseRedirect(reverse("admin:questionnaires_carddefinition_changelist"))

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, object] | None = None,
    ) -> HttpResponse:
        """The definition's report (there is nothing to change)."""
        self._viewer(request)
        refresh_when_stale()
        if not object_id.isdigit():
            raise Http404
        definition = self.get_queryset(request).filter(pk=int(object_id)).first()
        if definition is None:
            raise Http404
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": definition.title or definition.fingerprint[:12],
            "report": definition_report(definition),
            "last_refreshed": last_refreshed(),
            "media": self.media,
        }
        return TemplateResponse(request, "admin/questionnaires/carddefinition/report.html", context)

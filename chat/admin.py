from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import F, Model, Q, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from chat.core.agents import agent_choices, agent_label, model_agents
from chat.core.models import (
    ApiToken,
    Conversation,
    Event,
    Message,
    ModelUsage,
    QuestionBudget,
    Run,
    RunAttempt,
    UsageByUser,
    Wait,
)
from chat.core.selectors import question_budget_limits
from chat.core.services import api_token_create
from chat.core.usage import usage_day
from chat.edge.page import message_item
from chat.mcphost.models import McpServer
from chat.mcphost.records import McpServerState
from chat.mcphost.tools import listing_warnings
from chat.skills.models import Skill
from questionnaires import registry
from questionnaires.registry import questions_asked

admin.site.site_header = _("Questionnaire chat · administration")
admin.site.site_title = _("Questionnaire chat admin")
admin.site.index_title = _("Conversations, runs and answers")

# A conversation's page shows its latest messages read-only; the full list is the
# (paginated, filterable) message changelist.
TRANSCRIPT_LIMIT = 50


def _preview(message: Message, language: str) -> str:
    """A message rendered as the chat renders it, in the conversation's language."""
    with translation.override(language):
        html = message_item(message).html
    marker = format_html("<p><strong>{}</strong></p>", _("HIDDEN")) if message.hidden else ""
    return format_html('{}<div class="qc-admin-preview">{}</div>', marker, html)


class RunInline(admin.TabularInline):
    model = Run
    extra = 0
    fields = (
        "status",
        "stop_reason",
        "iterations",
        "attempts",
        "started_at",
        "finished_at",
        "error",
    )
    readonly_fields = fields
    show_change_link = True


def _cost(value: object) -> str:
    if value is None:
        return "—"
    return f"{value:.4f} {settings.MODEL_COST_CURRENCY}"


def _usage_table(rows: QuerySet[ModelUsage]) -> str:
    """Token usage per model: calls, tokens in and out, whether estimated, cost."""
    totals = (
        rows.order_by("model")
        .values("model")
        .annotate(
            n=Sum("calls"),
            prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"),
            cost=Sum("cost"),
            estimated=Sum("calls", filter=Q(estimated=True)),
        )
    )
    body = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                t["model"],
                t["n"],
                f"{t['prompt']:,}",
                f"{t['completion']:,}",
                _("estimated") if t["estimated"] else _("reported"),
                _cost(t["cost"]),
            )
            for t in totals
        ),
    )
    if not body:
        return str(_("No model calls."))
    return format_html(
        "<table><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>{}"
        "</table>",
        _("Model"), _("Calls"), _("Tokens in"), _("Tokens out"), _("Count"), _("Cost"), body,
    )  # fmt: skip


_TOKENS = Coalesce(Sum("usage__prompt_tokens"), 0) + Coalesce(Sum("usage__completion_tokens"), 0)


class ConversationForm(forms.ModelForm):
    # The registry's agents (chat.core.agents): the column lists no choices of its own.
    agent = forms.ChoiceField(label=_("agent"), choices=agent_choices)

    class Meta:
        model = Conversation
        fields = "__all__"


class QuestionBudgetForm(forms.ModelForm):
    agent = forms.ChoiceField(label=_("agent"), choices=agent_choices)

    class Meta:
        model = QuestionBudget
        fields = "__all__"


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    form = ConversationForm
    list_display = ("id", "title", "owner", "agent_shown", "language", "tokens", "updated_at")
    list_filter = ("agent", "language")
    search_fields = ("title", "owner__username", "messages__content")
    readonly_fields = (
        "created_at",
        "updated_at",
        "token_usage",
        "question_budget",
        "transcript",
    )
    inlines = [RunInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[Any]:
        """Ours, with each kind's sections of a conversation before the transcript (e.g.
        the asks' consultation state: `CONVERSATION_FIELDS` of its admin module)."""
        fields: list[Any] = list(super().get_readonly_fields(request, obj))
        return [*fields[:-1], *registry.admin_conversation_fields(), *fields[-1:]]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Conversation]:
        queryset: QuerySet[Conversation] = super().get_queryset(request)
        return queryset.annotate(tokens_total=_TOKENS)

    @admin.display(description=_("agent"), ordering="agent")
    def agent_shown(self, obj: Conversation) -> str:
        return f"{agent_label(obj.agent)} ({obj.agent})"

    @admin.display(description=_("Tokens"), ordering="tokens_total")
    def tokens(self, obj: Conversation) -> str:
        return f"{getattr(obj, 'tokens_total', 0) or 0:,}"

    @admin.display(description=_("Token usage"))
    def token_usage(self, obj: Conversation) -> str:
        return _usage_table(ModelUsage.objects.filter(conversation_id=obj.pk))

    @admin.display(description=_("Question budget used"))
    def question_budget(self, obj: Conversation) -> str:
        """Questions the agent asked here against its budget (issue 27)."""
        per_turn, per_conversation, one_card = question_budget_limits(agent=obj.agent)
        asked = questions_asked(conversation=obj)
        limit = per_conversation if per_conversation is not None else "∞"
        return format_html(
            "<strong>{} / {}</strong> {}<br>{}: {} · {}: {}",
            asked,
            limit,
            _("questions asked in this conversation"),
            _("per turn"),
            per_turn if per_turn is not None else "∞",
            _("one open card at a time"),
            _("yes") if one_card else _("no"),
        )

    @admin.display(description=_("Messages"))
    def transcript(self, obj: Conversation) -> str:
        """The latest messages in order, hidden ones marked, each rendered; read-only."""
        total = obj.messages.count()
        latest = list(obj.messages.order_by("-seq")[:TRANSCRIPT_LIMIT])[::-1]
        url = reverse("admin:chat_message_changelist") + f"?conversation__id__exact={obj.pk}"
        rows = format_html_join(
            "",
            '<tr><td>#{}</td><td>{}</td><td>{}</td><td><a href="{}">{}</a></td></tr>',
            (
                (
                    m.seq,
                    m.get_role_display(),
                    _preview(m, obj.language),
                    reverse("admin:chat_message_change", args=[m.pk]),
                    _("open"),
                )
                for m in latest
            ),
        )
        more = (
            format_html(
                '<p>{} <a href="{}">{}</a></p>',
                _("Showing the latest %(n)s of %(total)s messages.")
                % {"n": len(latest), "total": total},
                url,
                _("All messages"),
            )
            if total > len(latest)
            else ""
        )
        return format_html('{}<table class="qc-admin-transcript">{}</table>', more, rows)


@admin.register(QuestionBudget)
class QuestionBudgetAdmin(admin.ModelAdmin):
    """Per-agent question budgets (issue 27); agents without a row use the settings'
    QUESTION_BUDGET_* defaults. Self-check enforces them."""

    form = QuestionBudgetForm
    list_display = ("agent_shown", "per_turn", "per_conversation", "one_card")

    @admin.display(description=_("agent"), ordering="agent")
    def agent_shown(self, obj: QuestionBudget) -> str:
        return f"{agent_label(obj.agent)} ({obj.agent})"


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("id", "conversation", "seq", "role", "hidden", "readonly", "short")
    list_filter = ("role", "hidden", "readonly", "conversation")
    search_fields = ("content", "display_content", "tool_call_id")
    list_select_related = ("conversation",)
    readonly_fields = ("preview", "created_at")

    @admin.display(description=_("Content"))
    def short(self, obj: Message) -> str:
        return (obj.content[:80] + "…") if len(obj.content) > 80 else obj.content

    @admin.display(description=_("Rendered preview"))
    def preview(self, obj: Message) -> str:
        return _preview(obj, obj.conversation.language) if obj.pk else "—"


class RunAttemptInline(admin.TabularInline):
    """Each worker's go at the run: several when workers died under it (durable turns)."""

    model = RunAttempt
    extra = 0
    can_delete = False
    fields = ("number", "worker", "task_id", "outcome", "started_at", "ended_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class WaitInline(admin.TabularInline):
    """What the run waits for (or waited for), until when, and how it ended."""

    model = Wait
    extra = 0
    can_delete = False
    fields = ("kind", "ref", "tool_call_id", "resumes_run", "status", "deadline", "closed_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "conversation",
        "status",
        "stop_reason",
        "iterations",
        "attempts",
        "worker",
        "created_at",
    )
    list_filter = ("status", "stop_reason")
    search_fields = ("conversation__title", "error", "worker")
    readonly_fields = ("attempts", "worker", "heartbeat_at", "checkpoint")
    inlines = [RunAttemptInline, WaitInline]


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ("id", "conversation", "name", "created_at")
    list_filter = ("name",)
    search_fields = ("name",)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "name", "created_at", "last_used_at")
    readonly_fields = ("prefix", "created_at", "last_used_at")
    search_fields = ("user__username", "name", "prefix")

    def save_model(
        self, request: HttpRequest, obj: ApiToken, form: forms.Form, change: bool
    ) -> None:
        if not change:
            token, raw = api_token_create(user=obj.user, name=obj.name)
            obj.pk = token.pk
            self.message_user(request, _("New token (copy it now, it is shown once): %s") % raw)
            return
        super().save_model(request, obj, form, change)


@admin.register(Skill)
class SkillAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "owner", "updated_at")
    search_fields = ("name", "description", "skill_md")


class McpServerForm(forms.ModelForm):
    """Secrets are write-only: the form never renders a stored header value or token.
    Blank fields keep what is stored; "clear" removes it."""

    agents = forms.MultipleChoiceField(
        label=_("agents"),
        choices=lambda: [(a.name, str(a.label)) for a in model_agents()],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=_("Agent kinds whose turns may use this server's tools."),
    )
    headers_text = forms.CharField(
        label=_("headers"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "autocomplete": "off"}),
        help_text=_('One "Name: value" per line; replaces the stored headers. Blank: keep.'),
    )
    bearer = forms.CharField(
        label=_("bearer token"),
        required=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=_("Sent as Authorization: Bearer …. Blank: keep."),
    )
    clear_secrets = forms.BooleanField(label=_("clear headers and token"), required=False)

    class Meta:
        model = McpServer
        fields = ("name", "url", "enabled", "agents")

    def clean_headers_text(self) -> dict[str, str] | None:
        text = self.cleaned_data.get("headers_text", "")
        if not text.strip():
            return None
        headers: dict[str, str] = {}
        for line in text.splitlines():
            if not line.strip():
                continue
            name, sep, value = line.partition(":")
            if not sep or not name.strip():
                raise forms.ValidationError(_('Each line is "Name: value".'))
            headers[name.strip()] = value.strip()
        return headers

    def save(self, commit: bool = True) -> McpServer:
        server: McpServer = super().save(commit=False)
        if self.cleaned_data.get("clear_secrets"):
            server.headers, server.bearer_token = {}, ""
        if self.cleaned_data.get("headers_text") is not None:
            server.headers = self.cleaned_data["headers_text"]
        if self.cleaned_data.get("bearer"):
            server.bearer_token = self.cleaned_data["bearer"]
        if commit:
            server.save()
        return server

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # ModelForm's (the stubs leave it out)
        # Validate the headers and token that will be stored (model.clean reads them).
        headers = self.cleaned_data.get("headers_text")
        if headers is not None:
            self.instance.headers = headers
        if self.cleaned_data.get("bearer"):
            self.instance.bearer_token = self.cleaned_data["bearer"]
        try:
            self.instance.clean()
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                target = {"headers": "headers_text", "bearer_token": "bearer"}.get(field, field)
                self.add_error(target if target in self.fields else None, errors)


@admin.register(McpServer)
class McpServerAdmin(admin.ModelAdmin):
    form = McpServerForm
    list_display = (
        "name", "url", "enabled", "agents_list", "secrets", "server_health", "warnings", "updated_at"
    )  # fmt: skip
    list_filter = ("enabled",)
    search_fields = ("name", "url")
    readonly_fields = (
        "stored_secrets",
        "server_health",
        "tool_warnings",
        "created_at",
        "updated_at",
    )
    fields = (
        "name",
        "url",
        "enabled",
        "agents",
        "stored_secrets",
        "headers_text",
        "bearer",
        "clear_secrets",
        "server_health",
        "tool_warnings",
        "created_at",
        "updated_at",
    )

    def save_model(
        self, request: HttpRequest, obj: McpServer, form: forms.Form, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        if change and "url" in form.changed_data:  # another server: learn its revision anew
            McpServerState.objects.filter(server_id=obj.pk).update(revision="", legacy_tools=[])

    # Not `health`: that name is the server's reverse one-to-one (McpServerState), which
    # admin would show in this method's place.
    @admin.display(description=_("health"))
    def server_health(self, obj: McpServer) -> str:
        """The negotiated revision, the last success and error, the circuit breaker."""
        state = McpServerState.objects.filter(server_id=obj.pk).first()
        if state is None:
            return "—"
        parts = [
            f"{_('protocol revision')}: {state.revision or '?'}",
            f"{_('last success at')}: {state.last_success_at or '—'}",
        ]
        if state.legacy_tools:
            tools = ", ".join(str(t) for t in state.legacy_tools)
            parts.append(str(_("tools that ask mid-call, called in 2025-11-25: %s")) % tools)
        if state.last_error:
            parts.append(f"{_('last error')}: {state.last_error} ({state.last_error_at})")
        if state.open_until and state.open_until > timezone.now():
            parts.append(f"{_('left out until')}: {state.open_until}")
        return " · ".join(parts)

    @admin.display(description=_("agents"))
    def agents_list(self, obj: McpServer) -> str:
        return ", ".join(obj.agents or []) or "—"

    @admin.display(description=_("secrets"))
    def secrets(self, obj: McpServer) -> str:
        """Header names only: a value is never shown back."""
        return ", ".join(obj.masked_headers()) or "—"

    @admin.display(description=_("warnings"))
    def warnings(self, obj: McpServer) -> str:
        left_out = len(listing_warnings(obj))
        return _("%(n)s tools left out or cut") % {"n": left_out} if left_out else "—"

    @admin.display(description=_("tool list warnings"))
    def tool_warnings(self, obj: McpServer) -> str:
        """What the last listing left out of the model's tools, or cut (see the log)."""
        lines = listing_warnings(obj)
        return format_html_join("", "<div>{}</div>", ((line,) for line in lines)) if lines else "—"

    @admin.display(description=_("stored headers"))
    def stored_secrets(self, obj: McpServer) -> str:
        shown = obj.masked_headers()
        return format_html_join(", ", "{}: {}", shown.items()) if shown else "—"


@admin.register(ModelUsage)
class ModelUsageAdmin(admin.ModelAdmin):
    """Tokens per run, model and day (read-only: written by the runs)."""

    list_display = (
        "day",
        "user",
        "conversation",
        "run",
        "model",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "estimated",
        "cost_display",
    )
    list_filter = ("model", "estimated", "day")
    search_fields = ("user__username", "model")
    date_hierarchy = "day"
    list_select_related = ("user", "conversation", "run")

    @admin.display(description=_("Cost"), ordering="cost")
    def cost_display(self, obj: ModelUsage) -> str:
        return _cost(obj.cost)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(UsageByUser)
class UsageByUserAdmin(admin.ModelAdmin):
    """Totals per person: today (what DAILY_TOKEN_BUDGET counts), the last 30 days, all
    time, and what it cost."""

    list_display = ("username", "today", "last_30_days", "total", "cost_total")
    search_fields = ("username",)
    fields = ("username", "today", "last_30_days", "total", "cost_total", "by_model")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[UsageByUser]:
        today = usage_day()
        month = today - timedelta(days=29)
        tokens = F("model_usage__prompt_tokens") + F("model_usage__completion_tokens")
        queryset: QuerySet[UsageByUser] = super().get_queryset(request)
        return queryset.annotate(
            tokens_today=Coalesce(Sum(tokens, filter=Q(model_usage__day=today)), 0),
            tokens_month=Coalesce(Sum(tokens, filter=Q(model_usage__day__gte=month)), 0),
            tokens_total=Coalesce(Sum(tokens), 0),
            cost_sum=Sum("model_usage__cost"),
        ).order_by("-tokens_today", "-tokens_total", "username")

    @admin.display(description=_("Tokens today"), ordering="tokens_today")
    def today(self, obj: UsageByUser) -> str:
        used = getattr(obj, "tokens_today", 0) or 0
        budget = settings.DAILY_TOKEN_BUDGET
        return f"{used:,} / {budget:,}" if budget else f"{used:,}"

    @admin.display(description=_("Last 30 days"), ordering="tokens_month")
    def last_30_days(self, obj: UsageByUser) -> str:
        return f"{getattr(obj, 'tokens_month', 0) or 0:,}"

    @admin.display(description=_("All time"), ordering="tokens_total")
    def total(self, obj: UsageByUser) -> str:
        return f"{getattr(obj, 'tokens_total', 0) or 0:,}"

    @admin.display(description=_("Cost"), ordering="cost_sum")
    def cost_total(self, obj: UsageByUser) -> str:
        return _cost(getattr(obj, "cost_sum", None))

    @admin.display(description=_("By model"))
    def by_model(self, obj: UsageByUser) -> str:
        return _usage_table(ModelUsage.objects.filter(user_id=obj.pk))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return request.method in {"GET", "HEAD"} and super().has_view_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


# django-axes' admin model names, which it doesn't translate into Chinese: listed here so
# `make messages` keeps them in our catalog (which Django reads before axes' own).
AXES_NAMES = (
    gettext_noop("access attempt"),
    gettext_noop("access attempts"),
    gettext_noop("access failure"),
    gettext_noop("access failures"),
    gettext_noop("access log"),
    gettext_noop("access logs"),
    gettext_noop("access attempt expiration"),
    gettext_noop("access attempt expirations"),
)

"""The conversation core: conversations, messages, agent runs, persisted stream events,
API tokens. Every other layer may import these; they import nothing of the project."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.models import User
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

# An agent's name (Conversation.agent): one of the registry's (chat.core.agents), which
# the forms, admin and the API check; the column lists no choices, so a new agent needs
# no migration.
AGENT_NAME_MAX = 20


class Conversation(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    title = models.CharField(max_length=200, blank=True)
    agent = models.CharField(max_length=AGENT_NAME_MAX, default="echo")
    # The conversation's language ("en" / "zh-hans"): agents answer and diagnose in it.
    language = models.CharField(max_length=10, default="en")
    # Agent-specific state, e.g. {"consultation_state": {...}, "missing_slots": [...]}.
    state = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
        indexes = [models.Index(fields=["owner", "-updated_at"], name="conv_owner_updated")]
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title or gettext("Conversation %(n)s") % {"n": self.pk}


class Role(models.TextChoices):
    USER = "user", _("User")
    ASSISTANT = "assistant", _("Assistant")
    TOOL = "tool", _("Tool")
    SYSTEM = "system", _("System")


class Message(models.Model):
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    # Strictly increasing per conversation; (conversation, seq) is unique and indexed, so
    # ordering and "latest message" queries are index scans.
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=10, choices=Role.choices)
    content = models.TextField(blank=True)
    # What the chat shows when it differs from `content` (e.g. a readable answer).
    display_content = models.TextField(blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    tool_call_id = models.CharField(max_length=200, blank=True)
    readonly = models.BooleanField(default=False)
    # Never shown in the chat (self-check diagnostics, superseded replies); admin shows them.
    hidden = models.BooleanField(default=False)
    metadata = models.JSONField(default=dict, blank=True)
    run = models.ForeignKey(
        "Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("message")
        verbose_name_plural = _("messages")
        ordering = ["conversation", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "seq"], name="message_conv_seq_uniq")
        ]
        indexes = [
            models.Index(fields=["conversation", "role", "seq"], name="msg_conv_role_seq"),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.role}"

    @property
    def shown_content(self) -> str:
        return self.display_content or self.content


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    # Waiting inside a tool call for something outside any process (a person answering
    # an MCP server's question, the MCP session host): no worker holds it; its `Wait`
    # rows say what it waits for and until when, and it is queued again (a new attempt
    # resuming from its last persisted step) once they are all closed.
    SUSPENDED = "suspended", _("Waiting")
    FINISHED = "finished", _("Finished")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


class StopReason(models.TextChoices):
    COMPLETED = "completed", _("Completed")
    AWAITING_USER_INPUT = "awaiting_user_input", _("Awaiting user input")
    DEFERRED = "deferred", _("Deferred (form)")
    # An external runtime's run ended by a deferred tool result (spec 003): the answer
    # starts the next run.
    TOOL_DEFERRED = "tool_deferred", _("Deferred tool result")
    IDLE = "idle", _("Idle (external runtime went away)")
    MAX_ITERATIONS = "max_iterations", _("Max iterations")
    LOOP_DETECTED = "loop_detected", _("Repeated tool calls")
    CANCELLED = "cancelled", _("Cancelled")
    ERROR = "error", _("Error")


# `Run.worker` of a run an external runtime opened (`POST …/runs`): no heartbeat; it
# expires after RUN_TOKEN_MAX_AGE_SECONDS, like its tokens.
EXTERNAL_WORKER = "external"


class Run(models.Model):
    """One agent execution round, started by one user message."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="runs")
    trigger_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=12, choices=RunStatus.choices, default=RunStatus.QUEUED)
    stop_reason = models.CharField(max_length=24, choices=StopReason.choices, blank=True)
    iterations = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    # Which process runs it and when it last proved alive (dead workers are detected).
    # While queued again after a dead worker, heartbeat_at is when it was queued.
    worker = models.CharField(max_length=100, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Durable turns: how many times a worker took the run (each is a RunAttempt), and
    # where its turn stands (chat.runs.resume) so the next attempt picks up there.
    attempts = models.PositiveSmallIntegerField(default=0)
    checkpoint = models.JSONField(default=dict, blank=True)
    # When the run was last handed to an executor (queue message, thread). A run still
    # queued well after that lost its hand-off (the process died in between, the broker
    # restarted) and is handed off again by the reaper (chat.runs.heartbeat).
    dispatched_at = models.DateTimeField(null=True, blank=True)
    # Since when a queued run waits behind its conversation's turn or its person's cap of
    # turns (chat.runs.slots): no executor holds it, its turn's end hands it off again.
    held_at = models.DateTimeField(null=True, blank=True)
    # The id of the request that asked for the run (logs: chat.obs.logs), for its log
    # lines wherever and however often it is taken.
    request_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("agent run")
        verbose_name_plural = _("agent runs")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["conversation", "status"], name="run_conv_status"),
            # The reaper looks at active runs only, every few seconds: keep that cheap
            # however many finished runs there are.
            models.Index(
                fields=["status"],
                condition=models.Q(status__in=["queued", "running"]),
                name="run_active",
            ),
        ]

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.status})"


class RunAttempt(models.Model):
    """One worker's go at a run; a run has several when workers died under it."""

    class Outcome(models.TextChoices):
        RUNNING = "running", _("Running")
        FINISHED = "finished", _("Finished")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")
        LOST = "lost", _("Worker lost")
        # The run suspended: this attempt ended waiting for a person or the MCP host.
        SUSPENDED = "suspended", _("Suspended")

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    # host:pid, or celery node:pid of the process that ran it; the broker's message id.
    worker = models.CharField(max_length=200, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("run attempt")
        verbose_name_plural = _("run attempts")
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="run_attempt_number_uniq")
        ]

    def __str__(self) -> str:
        return f"Run {self.run_id} attempt {self.number} ({self.outcome})"


# A wait's kind is a registered card kind's name (questionnaires.registry checks it when
# the wait opens: no list of kinds here, nor a migration per kind), every one of which
# waits for a person (the per-user and per-conversation limits count them) — or this:
# not a person, a tool call the MCP session host executes for a suspended run.
MCP_CALL_WAIT = "mcp_call"


class WaitStatus(models.TextChoices):
    OPEN = "open", _("Open")
    ANSWERED = "answered", _("Answered")
    EXPIRED = "expired", _("Expired")
    CANCELLED = "cancelled", _("Cancelled")
    ENDED = "ended", _("Ended")


class Wait(models.Model):
    """What a run (or a conversation, for kinds whose answer starts a new run) waits for,
    until when, and how it resumes (chat.core.waits).

    `resumes_run`: the run is suspended on this wait and is queued again once none of its
    resuming waits is open (an MCP elicitation, a call in the session host); otherwise
    the person's answer is a new user message that starts a new run (inline cards,
    deferred forms, asks: spec 000/003/004) and closes the conversation's open waits.
    """

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="waits")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="waits"
    )
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.CASCADE, related_name="waits"
    )
    kind = models.CharField(max_length=12)  # a kind's name, or MCP_CALL_WAIT
    # The kind's row, e.g. "elicitation:12" (unique: one wait per card).
    ref = models.CharField(max_length=80, unique=True)
    tool_call_id = models.CharField(max_length=200, blank=True)
    resumes_run = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=WaitStatus.choices, default=WaitStatus.OPEN)
    # The span that opened it (W3C traceparent, only while tracing is on): the wait's own
    # span is recorded under it when the wait closes (chat.obs.tracing.span_record).
    trace_context = models.CharField(max_length=100, blank=True)
    deadline = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("wait")
        verbose_name_plural = _("waits")
        ordering = ["id"]
        indexes = [
            models.Index(
                fields=["owner"], condition=models.Q(status="open"), name="wait_open_owner"
            ),
            models.Index(
                fields=["conversation"], condition=models.Q(status="open"), name="wait_open_conv"
            ),
            models.Index(fields=["run"], condition=models.Q(status="open"), name="wait_open_run"),
            models.Index(
                fields=["deadline"], condition=models.Q(status="open"), name="wait_open_deadline"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.ref} ({self.status})"


class Event(models.Model):
    """A persisted stream event; its primary key is the SSE `id` (Last-Event-ID replay)."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="events")
    name = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("stream event")
        verbose_name_plural = _("stream events")
        ordering = ["id"]
        indexes = [models.Index(fields=["conversation", "id"], name="event_conv_id")]

    def __str__(self) -> str:
        return f"{self.id} {self.name}"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A per-user bearer token for `/api/v1/`; only its SHA-256 is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=12, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


class ModelUsage(models.Model):
    """Tokens one run took from one model on one day (UTC): the endpoint's count, or an
    estimate (`estimated`: an offline agent, an endpoint that reports none).

    Rows outlive their conversation and run (deleting a chat must not reset a person's
    daily budget); `cost` is priced when written, from `settings.MODEL_COSTS` (empty
    when the model has no price)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="model_usage"
    )
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="usage"
    )
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="usage"
    )
    model = models.CharField(max_length=200)
    day = models.DateField()
    calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    estimated = models.BooleanField(default=False)
    cost = models.DecimalField(max_digits=16, decimal_places=6, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        verbose_name = _("model usage")
        verbose_name_plural = _("model usage")
        constraints = [
            models.UniqueConstraint(fields=["run", "model", "day"], name="usage_run_model_day")
        ]
        indexes = [models.Index(fields=["user", "day"], name="usage_user_day")]

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __str__(self) -> str:
        return f"{self.model} {self.day}: {self.total_tokens} tokens"


class UsageByUser(User):
    """People as admin's token-usage page lists them (totals per user; no table)."""

    class Meta:
        proxy = True
        verbose_name = _("token usage by user")
        verbose_name_plural = _("token usage by user")


class NotifyMode(models.TextChoices):
    OFF = "off", _("Off")
    DIGEST = "digest", _("A digest email")
    IMMEDIATE = "immediate", _("Right away")


class UserPreferences(models.Model):
    """A person's settings of the chat, one row per user (made on first change).

    `developer_details`: show the machinery people don't need — what the assistant receives
    (envelopes), tool names and arguments, confidence figures, API hints.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_preferences"
    )
    developer_details = models.BooleanField(_("developer details"), default=False)
    # Questions waiting for the person (chat.inbox.notify): quiet unless they ask for more.
    notify = models.CharField(
        _("notifications"), max_length=10, choices=NotifyMode.choices, default=NotifyMode.OFF
    )
    # When the last digest went out (a digest lists only when something new waits since).
    digest_sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("chat preferences")
        verbose_name_plural = _("chat preferences")

    def __str__(self) -> str:
        return str(self.user)


class QuestionBudget(models.Model):
    """How much an agent may ask (issue 27), set in admin; self-check enforces it. An agent
    without a row uses the settings' `QUESTION_BUDGET_*` defaults."""

    agent = models.CharField(_("agent"), max_length=AGENT_NAME_MAX, unique=True)
    per_turn = models.PositiveSmallIntegerField(
        _("questions per turn"), null=True, blank=True, help_text=_("Empty: no limit.")
    )
    per_conversation = models.PositiveIntegerField(
        _("questions per conversation"), null=True, blank=True, help_text=_("Empty: no limit.")
    )
    one_card = models.BooleanField(
        _("one open card at a time"),
        default=False,
        help_text=_("A reply may show at most one card (questionnaire, form or question)."),
    )

    class Meta:
        verbose_name = _("question budget")
        verbose_name_plural = _("question budgets")
        ordering = ["agent"]

    def __str__(self) -> str:
        return self.agent

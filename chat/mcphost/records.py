"""What the MCP host keeps in the database: each tool call a run made (`McpCall`, the
source of truth between a run's attempts and the session host), each server's health
(`McpServerState`: negotiated revision, last error and success, the circuit breaker),
and the session host's lease (`McpHostLease`)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from chat.core.models import Conversation, Run
from chat.mcphost.models import McpServer


class McpCallState(models.TextChoices):
    # A worker is making a round of the call itself (2026-07-28 server).
    CALLING = "calling", _("Calling")
    # The server needs input first (2026-07-28): cards are open; the answer re-issues the
    # call with the responses and the server's request state.
    INPUT = "input", _("Waiting for input")
    # Handed to the MCP session host (2025-11-25 server: its session stays open there).
    HOSTED = "hosted", _("In the session host")
    DONE = "done", _("Done")


class McpCall(models.Model):
    """One tool call of a run to an MCP server, from the first round to its result."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="mcp_calls")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    tool_call_id = models.CharField(max_length=200)
    server = models.ForeignKey(McpServer, null=True, on_delete=models.SET_NULL, related_name="+")
    server_name = models.CharField(max_length=100)
    tool = models.CharField(max_length=200)
    arguments = models.JSONField(default=dict)
    revision = models.CharField(max_length=20, blank=True)
    state = models.CharField(max_length=8, choices=McpCallState.choices)
    rounds = models.PositiveSmallIntegerField(default=0)
    # 2026-07-28: the server's opaque state (echoed byte-exact) and its input requests
    # ({key: request as JSON}) of the round waiting for answers.
    request_state = models.TextField(blank=True)
    input_requests = models.JSONField(default=dict, blank=True)
    # Seconds of MCP_TOOL_TIMEOUT left (the clock runs only while waiting on the server).
    budget_left = models.FloatField()
    # The session host holding the call (its lease id), and when it took it.
    host = models.CharField(max_length=64, blank=True)
    taken_at = models.DateTimeField(null=True, blank=True)
    # What the model sees (a tool result object), once done.
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "chat"
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "tool_call_id"], name="mcp_call_run_call_uniq")
        ]
        indexes = [
            models.Index(
                fields=["host"], condition=models.Q(state="hosted"), name="mcp_call_hosted"
            )
        ]

    def __str__(self) -> str:
        return f"{self.server_name}.{self.tool} ({self.state})"


class McpServerState(models.Model):
    """How a server has been doing: the revision it speaks, its last error and success,
    and the circuit breaker (open until `open_until` after consecutive failures)."""

    server = models.OneToOneField(McpServer, on_delete=models.CASCADE, related_name="health")
    revision = models.CharField(_("protocol revision"), max_length=20, blank=True)
    # The tools whose 2026-07-28 call failed because they ask over the old back-channel
    # (`ctx.elicit` on a server that speaks both): each is called in 2025-11-25, through
    # the session host, from then on; the server's other tools stay in its revision.
    legacy_tools = models.JSONField(default=list, blank=True)
    last_error = models.CharField(_("last error"), max_length=500, blank=True)
    last_error_at = models.DateTimeField(_("last error at"), null=True, blank=True)
    last_success_at = models.DateTimeField(_("last success at"), null=True, blank=True)
    failures = models.PositiveIntegerField(_("consecutive failures"), default=0)
    open_until = models.DateTimeField(_("left out until"), null=True, blank=True)

    class Meta:
        app_label = "chat"
        verbose_name = _("MCP server health")
        verbose_name_plural = _("MCP server health")

    def __str__(self) -> str:
        return f"{self.server_id}: {self.revision or '?'} ({self.failures} failures)"


class McpHostLease(models.Model):
    """The MCP session host's lease: one row per host process, refreshed while it lives.
    Calls held by a host whose lease is stale end as interrupted."""

    host = models.CharField(max_length=64, unique=True)
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField()

    class Meta:
        app_label = "chat"

    def __str__(self) -> str:
        return f"{self.host} (pid {self.pid})"


def host_wait_ref(call_pk: int) -> str:
    """The `Wait.ref` of a call handed to the session host (it holds the run)."""
    return f"mcp_call:{call_pk}"

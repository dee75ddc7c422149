"""An MCP server an admin registered as a source of agent tools.

Everything here is admin-controlled: people chatting never supply a URL or a header, so
the host can only ever connect where an admin pointed it (no SSRF through user input;
the SDK follows redirects only within the endpoint's origin). Secrets (header values and
the bearer token) are stored encrypted (`chat.mcphost.sealed`) and never shown back in
full (`masked`).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from chat.core.agents import model_agent_names
from chat.mcphost.sealed import SealedJSONField, SealedTextField

# OpenAI function names: ^[A-Za-z0-9_-]{1,64}$. A server name is at most 24 characters
# and has no double underscore, so `NAME__TOOL` splits at its first `__` unambiguously
# and leaves a tool name 38 characters.
NAME_MAX = 24
TOOL_NAME_MAX = 64
BEARER_MAX = 4000
NAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?$")
HEADER_NAME_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an RFC 9110 token
# The bundled demo server, run in-process (see chat/mcphost/demo.py).
BUILTIN_SCHEME = "builtin"
BUILTIN_SERVERS = frozenset({"demo"})


def server_name_problem(name: str) -> str | None:
    """Why `name` can't name a server (None when it can)."""
    if not name or len(name) > NAME_MAX:
        return f"A server name has 1 to {NAME_MAX} characters."
    if not NAME_RE.match(name) or "__" in name:
        return (
            "A server name has letters, digits, '_' and '-' only, starts and ends with a "
            "letter or digit, and has no double underscore."
        )
    return None


def server_url_problem(url: str) -> str | None:
    """Why `url` can't be a server URL: http(s) with a host and no credentials in it
    (they belong in a header), or `builtin:demo`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "The URL can't be parsed."
    if parts.scheme == BUILTIN_SCHEME:
        if parts.path in BUILTIN_SERVERS and not (parts.netloc or parts.query):
            return None
        return f"Built-in servers: {', '.join(f'builtin:{n}' for n in sorted(BUILTIN_SERVERS))}."
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "The URL must be http:// or https:// with a host."
    if parts.username or parts.password:
        return "Put credentials in a header or the bearer token, not in the URL."
    if any(c.isspace() for c in url) or len(url) > 2000:
        return "The URL has whitespace or is too long."
    return None


def header_problem(name: str, value: str) -> str | None:
    if not HEADER_NAME_RE.match(name):
        return f"{name!r} is not a header name."
    if any(c in value for c in "\r\n\0"):
        return f"The value of {name} has a line break."
    return None


def masked(value: str) -> str:
    """A secret as it may be shown: its length only, never a character of it."""
    return "" if not value else f"•••• ({len(value)} chars)"


class McpServer(models.Model):
    name = models.CharField(
        _("name"),
        max_length=NAME_MAX,
        unique=True,
        help_text=_("Tools appear to the model as NAME__TOOL."),
    )
    url = models.CharField(
        _("URL"),
        max_length=2000,
        help_text=_("The streamable HTTP endpoint (http/https), or builtin:demo."),
    )
    # {header name: value}; values are secrets. Both are stored encrypted.
    headers = SealedJSONField(_("headers"), default=dict, blank=True)
    bearer_token = SealedTextField(_("bearer token"), blank=True, default="")
    enabled = models.BooleanField(_("enabled"), default=True)
    # Agents whose turns may use this server's tools (model-calling ones: chat.core.agents).
    agents = models.JSONField(_("agents"), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "chat"
        ordering = ["name"]
        verbose_name = _("MCP server")
        verbose_name_plural = _("MCP servers")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if problem := server_name_problem(self.name):
            errors["name"] = problem
        if problem := server_url_problem(self.url):
            errors["url"] = problem
        headers = self.headers if isinstance(self.headers, dict) else None
        if headers is None:
            errors["headers"] = "Headers are an object of names and values."
        else:
            for key, value in headers.items():
                if problem := header_problem(str(key), str(value)):
                    errors["headers"] = problem
        if any(c in self.bearer_token for c in "\r\n\0"):
            errors["bearer_token"] = "The token has a line break."  # noqa: S105 (a message)
        elif len(self.bearer_token) > BEARER_MAX:
            errors["bearer_token"] = f"The token has more than {BEARER_MAX} characters."
        model_agents = model_agent_names()
        if not isinstance(self.agents, list) or not set(self.agents) <= set(model_agents):
            errors["agents"] = f"Agents are a list of {', '.join(model_agents)}."
        if errors:
            raise ValidationError(errors)

    def request_headers(self) -> dict[str, str]:
        """The headers sent on every request (the bearer token as Authorization)."""
        headers = {str(k): str(v) for k, v in (self.headers or {}).items()}
        if self.bearer_token:
            headers["Authorization"] = f"Bearer {self.bearer_token}"
        return headers

    def masked_headers(self) -> dict[str, Any]:
        shown: dict[str, Any] = {k: masked(str(v)) for k, v in (self.headers or {}).items()}
        if self.bearer_token:
            shown["Authorization"] = "Bearer " + masked(self.bearer_token)
        return shown

    def allows(self, agent: str) -> bool:
        return self.enabled and agent in (self.agents or [])

    @property
    def cache_version(self) -> str:
        """Changes whenever the row does: the tool listing's cache key includes it."""
        return f"{self.pk}:{self.updated_at.timestamp() if self.updated_at else 0}"

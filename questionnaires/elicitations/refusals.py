"""Which MCP requests for input the chat won't show, and why (a stable code and the
human reason, in the conversation's language): unsafe links, unsupported modes and
schemas, secret fields. The card is still shown, locked, saying so."""

from __future__ import annotations

from django.utils.translation import gettext as _

from questionnaires.elicitations.links import url_is_openable
from questionnaires.elicitations.models import ElicitationMode
from questionnaires.protocol.elicitation_schema import schema_check


def refusal_of(server: str, mode: str, schema: object, url: str | None) -> tuple[str, str] | None:
    """(code, human reason) when the request can't be shown, else None."""
    if mode == ElicitationMode.URL:
        if url_is_openable(str(url or "")):
            return None
        return "elicitation_url_invalid", _(
            "“%(server)s” sent a link that can't be opened safely (only http and https "
            "links are); nothing was opened."
        ) % {"server": server}
    if mode != ElicitationMode.FORM:
        return "elicitation_mode_unsupported", _(
            "“%(server)s” asked for input in a way this chat doesn't support."
        ) % {"server": server}
    check = schema_check(schema)
    if check.ok:
        return None
    names = ", ".join(sorted({p.path for p in check.problems if p.path})) or "—"
    if check.secret:
        secret = ", ".join(sorted({p.path for p in check.problems if p.code == "secret_field"}))
        return "elicitation_secret_field", _(
            "“%(server)s” asked for a password, token or other secret (%(fields)s). "
            "Secrets are never asked for in the chat; nothing was sent."
        ) % {"server": server, "fields": secret}
    return "elicitation_schema_unsupported", _(
        "“%(server)s” asked for input this chat can't show (%(fields)s); nothing was sent."
    ) % {"server": server, "fields": names}

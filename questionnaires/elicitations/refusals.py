"""Which MCP requests for input the chat won't show, and why (a stable code and the
human reason, in the conversation's language): unsafe links, unsupported modes and
schemas, secret fields. The card is still shown, locked, saying so."""

from __future__ import annotations

from django.utils.translation import gettext as _

from questionnaires.elicitations.links import link_of
from questionnaires.elicitations.models import ElicitationMode
from questionnaires.protocol.elicitation_schema import message_secret, schema_check


def refusal_of(
    server: str, mode: str, schema: object, url: str | None, message: object = ""
) -> tuple[str, str] | None:
    """(code, human reason) when the request can't be shown, else None: a link a browser
    would not open where it says (or at all), another mode, a schema outside the subset, a
    secret asked for by a field or by the message beside a field to type it in."""
    if mode == ElicitationMode.URL:
        problem = link_of(str(url or "")).problem
        if not problem:
            return None
        return "elicitation_url_invalid", _(
            "“%(server)s” sent a link that can't be opened safely (%(why)s); nothing was opened."
        ) % {"server": server, "why": _link_problem(problem)}
    if mode != ElicitationMode.FORM:
        return "elicitation_mode_unsupported", _(
            "“%(server)s” asked for input in a way this chat doesn't support."
        ) % {"server": server}
    check = schema_check(schema)
    asks_secret = check.ok and message_secret(message, check.fields)
    if check.ok and not asks_secret:
        return None
    names = ", ".join(sorted({p.path for p in check.problems if p.path})) or "—"
    if check.secret or asks_secret:
        secret = ", ".join(sorted({p.path for p in check.problems if p.code == "secret_field"}))
        secret = secret or _("its message")
        return "elicitation_secret_field", _(
            "“%(server)s” asked for a password, token or other secret (%(fields)s). "
            "Secrets are never asked for in the chat; nothing was sent."
        ) % {"server": server, "fields": secret}
    return "elicitation_schema_unsupported", _(
        "“%(server)s” asked for input this chat can't show (%(fields)s); nothing was sent."
    ) % {"server": server, "fields": names}


def _link_problem(code: str) -> str:
    return {
        "url_characters": _("it has spaces, control or text-direction characters"),
        "url_unparsable": _("it isn't a web address"),
        "url_scheme": _("only https links are opened"),
        "url_userinfo": _("it hides a user name before the host"),
        "url_ambiguous": _("browsers could read another host out of it"),
    }.get(code, code)

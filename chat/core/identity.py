"""Per-run identities: signed, expiring tokens an agent runtime receives for one run.

- `MCP_RUN_TOKEN` — bearer token of the MCP endpoint (`/mcp/`): binds every tool call to
  one conversation and run (forms raised with it land in that conversation).
- `SKILL_IDENTITY_TOKEN` (also `WEGENT_SKILL_IDENTITY_TOKEN`, spec 003) — the skill
  runtime identity: accepted only by the three skill publishing endpoints, refused with
  401 everywhere else. It is not a login token.

Tokens are `django.core.signing` values (HMAC with SECRET_KEY, a per-purpose salt, a
timestamp checked against a maximum age), so verification needs no database.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core import signing

MCP_SALT = "chat.core.identity.mcp-run"
SKILL_SALT = "chat.core.identity.skill"
MCP_PREFIX = "mcprun."
SKILL_PREFIX = "skillid."


@dataclass(frozen=True)
class RunIdentity:
    conversation_id: int
    run_id: int
    user_id: int


def max_age() -> int:
    return int(settings.RUN_TOKEN_MAX_AGE_SECONDS)


def _issue(prefix: str, salt: str, *, conversation_id: int, run_id: int, user_id: int) -> str:
    payload = {"c": conversation_id, "r": run_id, "u": user_id}
    return prefix + signing.dumps(payload, salt=salt, compress=False)


def _verify(prefix: str, salt: str, raw: str | None, seconds: int | None) -> RunIdentity | None:
    if not raw or not raw.startswith(prefix):
        return None
    try:
        data: object = signing.loads(raw[len(prefix) :], salt=salt, max_age=seconds or max_age())
    except (signing.BadSignature, ValueError):  # SignatureExpired is a BadSignature
        return None
    if not isinstance(data, dict):
        return None
    try:
        return RunIdentity(int(data["c"]), int(data["r"]), int(data["u"]))
    except (KeyError, TypeError, ValueError):
        return None


def mcp_token_issue(*, conversation_id: int, run_id: int, user_id: int) -> str:
    return _issue(
        MCP_PREFIX, MCP_SALT, conversation_id=conversation_id, run_id=run_id, user_id=user_id
    )


def mcp_token_verify(raw: str | None, *, seconds: int | None = None) -> RunIdentity | None:
    return _verify(MCP_PREFIX, MCP_SALT, raw, seconds)


def skill_token_issue(*, conversation_id: int, run_id: int, user_id: int) -> str:
    return _issue(
        SKILL_PREFIX, SKILL_SALT, conversation_id=conversation_id, run_id=run_id, user_id=user_id
    )


def skill_token_verify(raw: str | None, *, seconds: int | None = None) -> RunIdentity | None:
    return _verify(SKILL_PREFIX, SKILL_SALT, raw, seconds)


def is_skill_token(raw: str | None) -> bool:
    """Looks like a skill identity token (valid or not): such tokens never log in."""
    return bool(raw) and str(raw).startswith(SKILL_PREFIX)


def run_environment(*, conversation_id: int, run_id: int, user_id: int) -> dict[str, str]:
    """The variables a run's runtime gets (e.g. a tool subprocess's environment)."""
    ids = {"conversation_id": conversation_id, "run_id": run_id, "user_id": user_id}
    skill = skill_token_issue(**ids)
    return {
        "MCP_RUN_TOKEN": mcp_token_issue(**ids),
        "SKILL_IDENTITY_TOKEN": skill,
        "WEGENT_SKILL_IDENTITY_TOKEN": skill,
    }

"""Skill publishing (spec 003): reads, writes and the skill identity token's scope.

A run's skill identity token (`SKILL_IDENTITY_TOKEN` / `WEGENT_SKILL_IDENTITY_TOKEN`,
see `chat.core.identity`) is accepted only by the three publishing endpoints
(`chat.edge.http.SKILL_ENDPOINTS`); `chat.edge.http.SkillTokenScopeMiddleware` refuses it
with 401 `skill_token_not_allowed` on every other URL, whatever that URL's own
authentication.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext as _

from chat.core.errors import ChatError, NotFound
from chat.core.identity import is_skill_token, skill_token_verify
from chat.core.selectors import run_identity_live
from chat.edge.http import (
    bad_token_check,
    bad_token_record,
    bearer_token,
    json_body,
    user_for_api_token,
)
from chat.skills.models import Skill
from questionnaires.protocol.jsontypes import JsonValue

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")
ARCHIVE_MAGIC = {
    ".zip": (b"PK\x03\x04", b"PK\x05\x06"),
    ".tar.gz": (b"\x1f\x8b",),
    ".tgz": (b"\x1f\x8b",),
}
MAX_SKILL_MD_CHARS = 200_000


def _bearer(request: HttpRequest) -> str:
    return bearer_token(request) or ""


def user_for_skill_token(raw: str) -> User | None:
    """The user a valid skill token stands for; None if invalid, expired or stale.

    The run must still be active in that user's conversation (a token dies with its run
    and its user).
    """
    identity = skill_token_verify(raw)
    if identity is None or not run_identity_live(identity):
        return None
    return User.objects.filter(pk=identity.user_id, is_active=True).first()


# --- reads -------------------------------------------------------------------------------


def skill_list(*, owner: User, name: str = "", exact_match: bool = False) -> QuerySet[Skill]:
    skills = Skill.objects.filter(owner=owner)
    if name:
        skills = skills.filter(name=name) if exact_match else skills.filter(name__icontains=name)
    return skills.order_by("name")


def skill_get(*, owner: User, skill_id: int) -> Skill:
    try:
        return Skill.objects.get(pk=skill_id, owner=owner)
    except (Skill.DoesNotExist, ValueError, TypeError):
        raise NotFound(_("No such skill.")) from None


def skill_json(skill: Skill) -> dict[str, JsonValue]:
    return {
        "id": skill.pk,
        "name": skill.name,
        "description": skill.description,
        "version": skill.version,
        "skill_md": skill.skill_md,
        "has_archive": bool(skill.archive),
        "created_at": skill.created_at.isoformat(),
        "updated_at": skill.updated_at.isoformat(),
    }


# --- writes ------------------------------------------------------------------------------


def _clean(fields: Mapping[str, object], *, partial: bool) -> dict[str, str]:
    errors: dict[str, str] = {}
    cleaned: dict[str, str] = {}
    name = fields.get("name")
    if name is not None or not partial:
        if not isinstance(name, str) or not NAME_RE.match(name.strip()):
            errors["name"] = _("1–100 letters, digits, dots, dashes or underscores.")
        else:
            cleaned["name"] = name.strip()
    for key, limit in (("description", 5000), ("version", 40), ("skill_md", MAX_SKILL_MD_CHARS)):
        value = fields.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or len(value) > limit:
            errors[key] = _("Must be text of at most %(n)s characters.") % {"n": limit}
        else:
            cleaned[key] = value.strip() if key == "version" else value
    if not partial and not cleaned.get("skill_md", "").strip() and "skill_md" not in errors:
        errors["skill_md"] = _("SKILL.md content is required.")
    if errors:
        raise ChatError(
            "skill_invalid", _("Some fields need attention."), details={"fields": errors}
        )
    return cleaned


def _check_archive(archive: UploadedFile | None) -> None:
    if archive is None:
        return
    limit = int(settings.SKILL_MAX_ARCHIVE_BYTES)
    if archive.size is not None and archive.size > limit:
        raise ChatError(
            "skill_archive_too_large",
            _("The archive is %(size)s bytes; the limit is %(limit)s.")
            % {"size": archive.size, "limit": limit},
            status=413,
        )
    name = (archive.name or "").lower()
    suffix = next((s for s in ARCHIVE_SUFFIXES if name.endswith(s)), None)
    head = archive.read(4)
    archive.seek(0)
    if suffix is None or not head.startswith(ARCHIVE_MAGIC[suffix]):
        raise ChatError(
            "skill_archive_invalid",
            _("The archive must be a .zip or .tar.gz file."),
            status=415,
        )


def skill_create(
    *, owner: User, fields: Mapping[str, object], archive: UploadedFile | None
) -> Skill:
    cleaned = _clean(fields, partial=False)
    _check_archive(archive)
    try:
        with transaction.atomic():
            skill = Skill(owner=owner, **cleaned)
            if archive is not None:
                skill.archive.save(archive.name or "skill.zip", archive, save=False)
            skill.save()
    except IntegrityError:
        raise ChatError(
            "skill_exists",
            _("You already have a skill named “%(name)s”; update it with PUT.")
            % {"name": cleaned["name"]},
            status=409,
        ) from None
    return skill


def skill_update(
    *, owner: User, skill_id: int, fields: Mapping[str, object], archive: UploadedFile | None
) -> Skill:
    skill = skill_get(owner=owner, skill_id=skill_id)
    cleaned = _clean(fields, partial=True)
    _check_archive(archive)
    for key, value in cleaned.items():
        setattr(skill, key, value)
    try:
        with transaction.atomic():
            if archive is not None:
                skill.archive.save(archive.name or "skill.zip", archive, save=False)
            skill.save()
    except IntegrityError:
        raise ChatError("skill_exists", _("Another skill has this name."), status=409) from None
    return skill


def skill_fields_from_request(
    request: HttpRequest,
) -> tuple[dict[str, object], UploadedFile | None]:
    """Multipart (`name`, `description`, `version`, `skill_md` or a `skill_file`
    SKILL.md upload, optional `archive`) or a JSON body with the same text fields."""
    if request.content_type == "application/json":
        body = json_body(request)
        return {k: body.get(k) for k in ("name", "description", "version", "skill_md")}, None
    data = request.POST
    fields: dict[str, object] = {
        k: data.get(k) for k in ("name", "description", "version", "skill_md")
    }
    upload = request.FILES.get("skill_file")
    if upload is not None and fields.get("skill_md") is None:
        if upload.size and upload.size > MAX_SKILL_MD_CHARS * 4:
            raise ChatError("skill_invalid", _("SKILL.md is too large."), status=413)
        try:
            fields["skill_md"] = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            raise ChatError("skill_invalid", _("SKILL.md must be UTF-8 text.")) from None
    return fields, request.FILES.get("archive")


def skill_auth_user(request: HttpRequest) -> User:
    """A skill identity token or a user API token; anything else is a 401."""

    bad_token_check(request)
    raw = _bearer(request)
    user = None
    if is_skill_token(raw):
        user = user_for_skill_token(raw)
    elif raw:
        user = user_for_api_token(raw)
    if user is None:
        bad_token_record(request)
        raise ChatError(
            "unauthorized",
            _("Send a valid skill identity token or API token: Authorization: Bearer <token>."),
            status=401,
        )
    return user

"""Skill publishing API (spec 003, DESIGN §6): thin adapters over `chat.skills.services`.

`GET /api/v1/kinds/skills?name=…&exact_match=true`, `POST /api/v1/kinds/skills/upload`,
`PUT /api/v1/kinds/skills/{skill_id}`. Bearer: a run's skill identity token or a user
API token. A body is multipart (`archive` and `skill_file` uploads) or JSON (the text
fields), so the services read it; the schemas below document both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Field, Router, Schema
from ninja.params import functions as param
from ninja.responses import Status

from chat.edge.apibase import BearerAuth, error_descriptions, errors
from chat.edge.http import request_check, signed_in
from chat.skills import services as skills


class SkillAuth(BearerAuth):
    """A run's skill identity token or a user API token (spec 003)."""

    def __call__(self, request: HttpRequest) -> User:
        user = skills.skill_auth_user(request)
        request.user = user
        request_check(request)
        return user


router = Router(auth=SkillAuth(), tags=["skills"])


class SkillOut(Schema):
    id: int
    name: str
    description: str
    version: str
    skill_md: str = Field(description="The SKILL.md text.")
    has_archive: bool
    created_at: str = Field(description="ISO 8601.")
    updated_at: str = Field(description="ISO 8601.")


class SkillList(Schema):
    items: list[SkillOut]
    total: int


class SkillFields(Schema):
    """The text fields (JSON body, or multipart fields beside the uploads)."""

    name: str = Field(description="1–100 letters, digits, dots, dashes or underscores.")
    description: str = Field("", max_length=5000)
    version: str = Field("", max_length=40)
    skill_md: str = Field(description="SKILL.md (or upload it as `skill_file`).")


UPLOADS = {
    "skill_file": {"type": "string", "format": "binary", "description": "SKILL.md as a file."},
    "archive": {"type": "string", "format": "binary", "description": "A .zip or .tar.gz."},
}


def _body(*, partial: bool) -> dict[str, object]:
    """The request body: the text fields as JSON, or multipart with the uploads."""
    fields = SkillFields.model_json_schema()
    fields.pop("title", None)
    multipart = {**fields, "properties": {**fields["properties"], **UPLOADS}}
    multipart["required"] = ["name"]  # skill_md may come as a skill_file
    if partial:
        fields.pop("required", None)
        multipart.pop("required")
    return {
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {"schema": multipart},
                "application/json": {"schema": fields},
            },
        }
    }


def _extra(*statuses: int, partial: bool | None = None) -> dict[str, object]:
    extra: dict[str, object] = {**error_descriptions(*statuses)}
    if partial is not None:
        extra.update(_body(partial=partial))
    return extra


@router.get(
    "/kinds/skills",
    url_name="skills",
    response={200: SkillList, **errors()},
    openapi_extra=_extra(),
    summary="List your skills",
)
def skill_list(
    request: HttpRequest,
    name: Annotated[str, param.Query(description="Filter by name (substring, or exact).")] = "",
    exact_match: Annotated[bool, param.Query(description="Match `name` exactly.")] = False,
) -> Mapping[str, object]:
    rows = skills.skill_list(owner=signed_in(request), name=name, exact_match=exact_match)
    items = [skills.skill_json(s) for s in rows]
    return {"items": items, "total": len(items)}


@router.post(
    "/kinds/skills/upload",
    url_name="skill_upload",
    response={201: SkillOut, **errors(409)},
    openapi_extra=_extra(409, partial=False),
    summary="Publish a skill",
)
def skill_upload(request: HttpRequest) -> Status[Mapping[str, object]]:
    fields, archive = skills.skill_fields_from_request(request)
    skill = skills.skill_create(owner=signed_in(request), fields=fields, archive=archive)
    return Status(201, skills.skill_json(skill))


@router.put(
    "/kinds/skills/{id:skill_id}",
    url_name="skill_update",
    response={200: SkillOut, **errors(409)},
    openapi_extra=_extra(409, partial=True),
    summary="Update a skill",
)
def skill_update(
    request: HttpRequest,
    skill_id: Annotated[int, param.Path(..., ge=0, le=2**63 - 1, description="The skill's id.")],
) -> Mapping[str, object]:
    if request.content_type == "multipart/form-data":
        # Django parses multipart bodies for POST only; parse this PUT the same way.
        request.method = "POST"
        request._load_post_and_files()
        request.method = "PUT"
    fields, archive = skills.skill_fields_from_request(request)
    skill = skills.skill_update(
        owner=signed_in(request), skill_id=skill_id, fields=fields, archive=archive
    )
    return skills.skill_json(skill)

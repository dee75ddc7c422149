"""Skill publishing API and the skill identity token's scope (spec 003)."""

from __future__ import annotations

import io
import json
import re
import time
import zipfile
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver

from chat.core.identity import run_environment, skill_token_issue
from chat.core.models import Run
from chat.skills.models import Skill

pytestmark = pytest.mark.django_db
SKILL_MD = "# Trip planner\n\nPlans trips.\n"


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path


@pytest.fixture
def run(conversation):
    return Run.objects.create(conversation=conversation, status="running")


@pytest.fixture
def skill_token(run, user):
    env = run_environment(conversation_id=run.conversation_id, run_id=run.pk, user_id=user.pk)
    assert env["SKILL_IDENTITY_TOKEN"] == env["WEGENT_SKILL_IDENTITY_TOKEN"]
    return env["SKILL_IDENTITY_TOKEN"]


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("scripts/run.py", "print('hi')\n")
    return buffer.getvalue()


def _upload(client, token, **extra):
    data = {
        "name": "trip-planner",
        "description": "Plans trips",
        "version": "1.0.0",
        "skill_md": SKILL_MD,
        **extra,
    }
    return client.post("/api/v1/kinds/skills/upload", data, headers=_auth(token))


def test_publish_flow_with_the_skill_token(client, skill_token, user):
    # the publishing script: look for the name, create, find it, overwrite it
    response = client.get(
        "/api/v1/kinds/skills?name=trip-planner&exact_match=true", headers=_auth(skill_token)
    )
    assert response.status_code == 200 and response.json() == {"items": [], "total": 0}
    archive = SimpleUploadedFile("files.zip", _zip(), content_type="application/zip")
    response = _upload(client, skill_token, archive=archive)
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["has_archive"] is True and Skill.objects.get().owner == user
    response = client.get(
        "/api/v1/kinds/skills?name=trip&exact_match=true", headers=_auth(skill_token)
    )
    assert response.json()["total"] == 0  # exact match only
    response = client.get("/api/v1/kinds/skills?name=trip", headers=_auth(skill_token))
    assert response.json()["total"] == 1
    body = {"version": "1.1.0", "skill_md": SKILL_MD + "More.\n"}
    response = client.put(
        f"/api/v1/kinds/skills/{created['id']}",
        json.dumps(body),
        content_type="application/json",
        headers=_auth(skill_token),
    )
    assert response.status_code == 200 and response.json()["version"] == "1.1.0"


def test_multipart_put_with_a_skill_md_file(client, api_token):
    created = _upload(client, api_token).json()
    from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

    files = {"skill_file": SimpleUploadedFile("SKILL.md", b"# New\n"), "version": "2.0.0"}
    response = client.put(
        f"/api/v1/kinds/skills/{created['id']}",
        encode_multipart(BOUNDARY, files),
        content_type=MULTIPART_CONTENT,
        headers=_auth(api_token),
    )
    assert response.status_code == 200, response.content
    assert response.json()["skill_md"] == "# New\n" and response.json()["version"] == "2.0.0"


def test_user_api_tokens_work_too(client, api_token):
    assert _upload(client, api_token).status_code == 201
    assert client.get("/api/v1/kinds/skills", headers=_auth(api_token)).json()["total"] == 1


@pytest.mark.parametrize(
    ("extra", "code", "status"),
    [
        ({"name": "bad name!"}, "skill_invalid", 400),
        ({"skill_md": ""}, "skill_invalid", 400),
        ({"archive": SimpleUploadedFile("x.exe", b"MZ....")}, "skill_archive_invalid", 415),
        ({"archive": SimpleUploadedFile("fake.zip", b"not a zip")}, "skill_archive_invalid", 415),
    ],
)
def test_invalid_uploads(client, skill_token, extra, code, status):
    response = _upload(client, skill_token, **extra)
    assert response.status_code == status and response.json()["error"] == code


def test_archive_size_limit(client, skill_token, settings):
    settings.SKILL_MAX_ARCHIVE_BYTES = 100
    archive = SimpleUploadedFile("big.zip", b"PK\x03\x04" + b"0" * 200)
    response = _upload(client, skill_token, archive=archive)
    assert response.status_code == 413 and response.json()["error"] == "skill_archive_too_large"


def _stored(tmp_path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "skills").glob("*")) if tmp_path.exists() else []


def _put_archive(client, token, skill_id: int, name: str):
    from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

    files = {"archive": SimpleUploadedFile(name, _zip())}
    return client.put(
        f"/api/v1/kinds/skills/{skill_id}",
        encode_multipart(BOUNDARY, files),
        content_type=MULTIPART_CONTENT,
        headers=_auth(token),
    )


def test_a_replaced_archive_is_deleted(
    client, api_token, tmp_path, django_capture_on_commit_callbacks
):
    """Issue 22: every PUT left the previous archive (up to 10 MiB) on disk."""
    with django_capture_on_commit_callbacks(execute=True):
        created = _upload(client, api_token, archive=SimpleUploadedFile("a.zip", _zip())).json()
        for n in range(3):
            assert _put_archive(client, api_token, created["id"], f"v{n}.zip").status_code == 200
    assert _stored(tmp_path) == [Skill.objects.get().archive.name.split("/")[-1]]
    # A refused upload (the name is taken) leaves no file behind either.
    with django_capture_on_commit_callbacks(execute=True):
        archive = SimpleUploadedFile("dup.zip", _zip())
        assert _upload(client, api_token, archive=archive).status_code == 409
    assert len(_stored(tmp_path)) == 1


def test_per_user_skill_storage_is_bounded(client, api_token, skill_token, settings, tmp_path):
    settings.SKILL_MAX_BYTES_PER_USER = len(SKILL_MD) * 2 + len(_zip()) + 10
    archive = SimpleUploadedFile("a.zip", _zip())
    first = _upload(client, api_token, archive=archive)
    assert first.status_code == 201
    assert _upload(client, api_token, name="second").status_code == 201
    before = (Skill.objects.count(), _stored(tmp_path))
    third = _upload(client, skill_token, name="third")
    assert third.status_code == 413 and third.json()["error"] == "skill_storage_full"
    big = _put_archive(client, api_token, Skill.objects.get(name="second").pk, "b.zip")
    assert big.status_code == 413 and big.json()["error"] == "skill_storage_full"
    assert (Skill.objects.count(), _stored(tmp_path)) == before
    # Replacing an archive with one of the same size fits: the old one no longer counts.
    assert _put_archive(client, api_token, first.json()["id"], "c.zip").status_code == 200


def test_duplicate_name_is_409(client, skill_token):
    _upload(client, skill_token)
    response = _upload(client, skill_token)
    assert response.status_code == 409 and response.json()["error"] == "skill_exists"


def test_other_users_skills_are_invisible(client, skill_token, other_user):
    theirs = Skill.objects.create(owner=other_user, name="theirs", skill_md="x")
    assert client.get("/api/v1/kinds/skills", headers=_auth(skill_token)).json()["total"] == 0
    response = client.put(
        f"/api/v1/kinds/skills/{theirs.pk}",
        "{}",
        content_type="application/json",
        headers=_auth(skill_token),
    )
    assert response.status_code == 404


def test_bad_skill_tokens_are_refused(client, run, user, other_user, skill_token):
    ids = {"conversation_id": run.conversation_id, "run_id": run.pk}
    with mock.patch("time.time", return_value=time.time() - 7 * 24 * 3600):
        expired = skill_token_issue(**ids, user_id=user.pk)
    tampered = skill_token[:-3] + ("abc" if not skill_token.endswith("abc") else "xyz")
    # a correctly signed token naming another user than the run's owner
    other = skill_token_issue(**ids, user_id=other_user.pk)
    for token in (expired, tampered, other, "skillid.garbage", "nonsense"):
        response = client.get("/api/v1/kinds/skills", headers=_auth(token))
        assert response.status_code == 401, token
        assert response.json()["error"] == "unauthorized"


# --- scope: every other URL refuses the skill token ---------------------------------------

ALLOWED = {"api:skills", "api:skill_upload", "api:skill_update"}
CONVERTERS = re.compile(r"<(?:(\w+):)?\w+>")
SAMPLE = {
    "int": "1",
    "str": "x",
    "slug": "x",
    "path": "x/y",
    "uuid": "00000000-0000-0000-0000-000000000000",
    None: "x",
}


def _regex_sample(regex: str) -> str:
    text = regex.lstrip("^").rstrip("$").replace("\\Z", "")
    text = re.sub(r"\(\?P<\w+>[^)]*\)", "1", text)
    text = re.sub(r"\([^)]*\)", "x", text)
    return text.replace("\\", "").replace("?", "").replace("*", "").replace("+", "")


def _walk(patterns, prefix: str = "", namespace: str = ""):
    for entry in patterns:
        pattern = str(entry.pattern)
        part = CONVERTERS.sub(lambda m: SAMPLE.get(m.group(1), "x"), pattern)
        if pattern.startswith("^"):
            part = _regex_sample(pattern)
        if isinstance(entry, URLResolver):
            ns = (
                f"{namespace}:{entry.namespace}"
                if namespace and entry.namespace
                else entry.namespace or namespace
            )
            yield from _walk(entry.url_patterns, prefix + part, ns)
        elif isinstance(entry, URLPattern):
            name = f"{namespace}:{entry.name}" if namespace and entry.name else entry.name
            yield "/" + prefix + part, name


def test_every_other_url_refuses_the_skill_token(client, skill_token):
    urls = list(_walk(get_resolver().url_patterns))
    assert len(urls) > 20
    checked = 0
    for url, name in urls:
        if name in ALLOWED:
            continue
        for method in ("get", "post"):
            response = getattr(client, method)(url, headers=_auth(skill_token))
            assert response.status_code == 401, (method, url, name, response.status_code)
            assert response.json()["error"] == "skill_token_not_allowed", (url, name)
            checked += 1
    assert checked > 40
    # and the MCP endpoint (outside Django) takes only MCP run tokens
    from chat.core.identity import mcp_token_verify

    assert mcp_token_verify(skill_token) is None


def test_the_three_skill_urls_accept_it(client, skill_token):
    assert client.get("/api/v1/kinds/skills", headers=_auth(skill_token)).status_code == 200
    assert _upload(client, skill_token).status_code == 201


@pytest.mark.parametrize("status", ["finished", "failed", "cancelled"])
def test_a_skill_token_dies_with_its_run(client, run, skill_token, status):
    Run.objects.filter(pk=run.pk).update(status=status)
    response = client.get("/api/v1/kinds/skills", headers=_auth(skill_token))
    assert response.status_code == 401


def test_a_skill_token_dies_with_its_user(client, user, skill_token):
    user.is_active = False
    user.save()
    response = client.get("/api/v1/kinds/skills", headers=_auth(skill_token))
    assert response.status_code == 401

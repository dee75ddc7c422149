"""``manage.py questionnaire_lint``: the JSON contract of DESIGN §6 and the exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

GOOD = (
    "Please confirm.\n\n```questionnaire\ntitle: 任务已暂停\nquestions:\n"
    "  - type: single_choice\n    text: 是否继续当前任务？\n    options:\n      - 继续\n"
    "    default: 继续\n```\n"
)
BAD = "Intro.\n\n```questionnaire\ntitle: T\nquestions: []\n```\n"


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "message.md"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_json_contract_for_a_valid_message(tmp_path: Path) -> None:
    out = io.StringIO()
    call_command(
        "questionnaire_lint", _write(tmp_path, GOOD), "--json", "--message-id", "42", stdout=out
    )
    report = json.loads(out.getvalue())
    assert list(report) == ["message_id", "segments", "self_check"]
    assert report["message_id"] == "42"
    assert report["self_check"] == {"passed": True, "issues": []}
    kinds = [s["kind"] for s in report["segments"]]
    assert kinds == ["markdown", "questionnaire", "markdown"]
    questionnaire = report["segments"][1]
    assert questionnaire["questionnaire_id"] == "42_q1"
    assert questionnaire["encoding"] == "yaml"
    assert questionnaire["questions"] == [
        {
            "id": "q1",
            "type": "single_choice",
            "text": "是否继续当前任务？",
            "options": [{"value": "继续", "label": "继续"}],
            "default": "继续",
            "allow_other": False,
        }
    ]
    assert "".join(s["raw"] for s in report["segments"]) == GOOD


def test_failing_self_check_exits_1(tmp_path: Path) -> None:
    out = io.StringIO()
    with pytest.raises(CommandError) as info:
        call_command("questionnaire_lint", _write(tmp_path, BAD), "--json", stdout=out)
    assert info.value.returncode == 1
    report = json.loads(out.getvalue())
    assert report["message_id"] == "lint"
    assert report["self_check"]["passed"] is False
    assert report["self_check"]["issues"][0]["code"] == "questionnaire.questions.empty"
    invalid = report["segments"][1]
    assert invalid["kind"] == "invalid"
    assert invalid["errors"][0]["path"] == "questions"


def test_missing_file_exits_2(tmp_path: Path) -> None:
    with pytest.raises(CommandError) as info:
        call_command("questionnaire_lint", str(tmp_path / "nope.md"))
    assert info.value.returncode == 2


def test_text_mode_lists_lines_and_errors(tmp_path: Path) -> None:
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("questionnaire_lint", _write(tmp_path, BAD), stdout=out)
    text = out.getvalue()
    assert "lines 3-6" in text
    assert "questionnaire.questions.empty" in text
    assert "self-check: FAILED" in text


def test_user_role_reads_responses(tmp_path: Path) -> None:
    envelope = (
        '<questionnaire-response>{"questionnaire_id":"1_q1","answers":[]}</questionnaire-response>'
    )
    out = io.StringIO()
    call_command(
        "questionnaire_lint", _write(tmp_path, envelope), "--json", "--role", "user", stdout=out
    )
    report = json.loads(out.getvalue())
    assert report["segments"][0]["kind"] == "response"
    assert report["self_check"]["passed"] is True


def _stdin(data: bytes) -> io.TextIOWrapper:
    """A stand-in for ``sys.stdin``: text on top of a byte ``buffer``, like the real one."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _stdin(GOOD.encode()))
    out = io.StringIO()
    call_command("questionnaire_lint", "-", stdout=out)
    assert "self-check: passed" in out.getvalue()


CRLF = GOOD.replace("\n", "\r\n") + "Trailing\rcarriage\r\n"


def _raws(out: io.StringIO) -> str:
    return "".join(s["raw"] for s in json.loads(out.getvalue())["segments"])


def test_crlf_file_segments_concatenate_to_its_exact_bytes(tmp_path: Path) -> None:
    path = tmp_path / "crlf.md"
    path.write_bytes(CRLF.encode("utf-8"))
    out = io.StringIO()
    call_command("questionnaire_lint", str(path), "--json", stdout=out)
    assert _raws(out).encode("utf-8") == path.read_bytes()
    kinds = [s["kind"] for s in json.loads(out.getvalue())["segments"]]
    assert kinds == ["markdown", "questionnaire", "markdown"]


def test_crlf_stdin_segments_concatenate_to_its_exact_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = ("\ufeff" + CRLF).encode("utf-8")  # a byte-order mark is content too
    monkeypatch.setattr("sys.stdin", _stdin(data))
    out = io.StringIO()
    call_command("questionnaire_lint", "-", "--json", stdout=out)
    assert _raws(out).encode("utf-8") == data


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_invalid_utf8_exits_2(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"Intro \xff\xfe broken\n"
    name = "-"
    if source == "file":
        path = tmp_path / "bad.md"
        path.write_bytes(data)
        name = str(path)
    else:
        monkeypatch.setattr("sys.stdin", _stdin(data))
    with pytest.raises(CommandError) as info:
        call_command("questionnaire_lint", name, stdout=io.StringIO())
    assert info.value.returncode == 2
    message = str(info.value)
    assert "not valid UTF-8" in message and "byte 6" in message

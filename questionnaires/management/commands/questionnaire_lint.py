"""``manage.py questionnaire_lint``: what the chat renders and what self-check says.

Contract (DESIGN §6): ``--json`` prints ``{"message_id", "segments", "self_check":
{"passed", "issues"}}``; exit 0 when self-check passes, 1 when it fails, 2 on bad
usage.  Without ``--json`` a readable listing with line numbers is printed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from questionnaires.protocol import (
    InvalidSegment,
    QuestionnaireSegment,
    ResponseSegment,
    Segment,
    SelfCheckIssue,
    parse_message,
    self_check,
)


class Command(BaseCommand):
    help = "Segment a message like the chat does and run the questionnaire self-check on it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="message file (UTF-8), or - for standard input")
        parser.add_argument("--message-id", default="lint", help="message id used for ids")
        parser.add_argument("--role", choices=("assistant", "user"), default="assistant")
        parser.add_argument("--json", action="store_true", help="print the JSON contract")
        parser.add_argument("--lang", default="en", help="language of messages (en, zh-hans)")

    def handle(self, *args: Any, **options: Any) -> None:
        content = _read(options["file"])
        role, lang = options["role"], options["lang"]
        segments = parse_message(content, message_id=options["message_id"], role=role, lang=lang)
        issues = _issues(content, segments, role, lang)
        passed = not issues
        if options["json"]:
            report = {
                "message_id": options["message_id"],
                "segments": [s.to_dict() for s in segments],
                "self_check": {"passed": passed, "issues": [i.to_dict() for i in issues]},
            }
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            self.stdout.write(_text_report(content, segments, issues))
        if not passed:
            raise CommandError(f"self-check failed: {len(issues)} issue(s)", returncode=1)


def _read(name: str) -> str:
    """The message exactly as stored: bytes decoded as UTF-8, with no newline
    translation, so the segments' raw texts concatenate back to the input's bytes
    (CRLF and a byte-order mark included).  Invalid UTF-8 is bad usage (exit 2)."""
    if name == "-":
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
        where = "standard input"
    else:
        try:
            data = Path(name).read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {name}: {exc}", returncode=2) from exc
        where = name
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(
            f"{where} is not valid UTF-8 (byte {exc.start}: {exc.reason})", returncode=2
        ) from exc


def _issues(
    content: str, segments: list[Segment], role: str, lang: str
) -> tuple[SelfCheckIssue, ...]:
    """Self-check issues; for a user message, the problems of its response blocks."""
    if role != "user":
        return self_check(content, lang=lang).issues
    return tuple(
        SelfCheckIssue(s.name, s.encoding, e.code, e.path, e.message)
        for s in segments
        if isinstance(s, InvalidSegment)
        for e in s.errors
    )


def _describe(segment: Segment) -> str:
    if isinstance(segment, QuestionnaireSegment):
        count = len(segment.questions)
        return (
            f"{segment.name} ({segment.encoding}) id={segment.questionnaire_id} "
            f"title={segment.title!r} questions={count}"
        )
    if isinstance(segment, ResponseSegment):
        return f"{segment.name} questionnaire_id={segment.payload.get('questionnaire_id')!r}"
    if isinstance(segment, InvalidSegment):
        return f"{segment.name} ({segment.encoding})"
    return f"{len(segment.raw)} chars"


def _text_report(content: str, segments: list[Segment], issues: tuple[SelfCheckIssue, ...]) -> str:
    lines = []
    for segment in segments:
        first = content.count("\n", 0, segment.start) + 1
        last = first + segment.raw.count("\n", 0, max(len(segment.raw.rstrip("\n")), 0))
        where = f"line {first}" if first == last else f"lines {first}-{last}"
        lines.append(f"{where:<14} {segment.kind:<13} {_describe(segment)}")
        if isinstance(segment, InvalidSegment):
            for error in segment.errors:
                path = f" {error.path}" if error.path else ""
                lines.append(f"{'':<14}   ! {error.code}{path}: {error.message}")
    if not segments:
        lines.append("(empty message)")
    if issues:
        lines.append(f"self-check: FAILED ({len(issues)} issue(s))")
        for issue in issues:
            path = f" {issue.path}" if issue.path else ""
            lines.append(f"  - {issue.name}{path}: {issue.message} [{issue.code}]")
    else:
        lines.append("self-check: passed")
    return "\n".join(lines)

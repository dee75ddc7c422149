"""Self-check (spec 000 "Self-check", DESIGN §4.13).

Inspects the latest non-empty assistant reply after the last user message with the
same validator the renderer uses, over all five registered names.  It never infers a
questionnaire from question marks or prose: only protocol blocks are judged.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .budget import QuestionBudget, budget_errors
from .catalogs import text
from .error_messages import make_error
from .names import SELF_CHECK_NAMES
from .parser import parse_with_names
from .segments import InvalidSegment, QuestionnaireSegment, SelfCheckIssue, SelfCheckResult


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI-style content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def latest_reply(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The latest non-empty assistant content after the last visible user message."""
    last_user = -1
    for index, message in enumerate(messages):
        if message.get("role") == "user" and not message.get("hidden"):
            last_user = index
    for message in reversed(messages[last_user + 1 :]):
        if message.get("role") == "assistant" and not message.get("hidden"):
            content = _content(message)
            if content.strip():
                return content
    return None


def self_check(
    subject: str | Sequence[Mapping[str, Any]],
    *,
    lang: str = "en",
    required_names: Collection[str] = (),
    budget: QuestionBudget | None = None,
    tool_cards: Sequence[int] = (),
) -> SelfCheckResult:
    """Check the protocol blocks of the latest reply.

    ``subject`` is the reply text or a list of ``{"role", "content", "hidden"?}``
    messages.  ``required_names`` are names that failed in the previous attempt: the
    repaired reply must contain a block of each again (either encoding).  When the
    check fails, ``diagnostic`` is the hidden message asking the model to output the
    complete corrected reply, in ``lang``.

    ``budget`` (issue 27) limits how much the reply asks: its valid questionnaire blocks
    plus ``tool_cards`` (the questions of each card the same step's tool calls open, see
    :func:`.budget.call_questions`).  Over budget is an issue with an empty ``name``
    (nothing has to come back in the repair: asking less, or nothing, passes).
    """
    if isinstance(subject, str):
        reply: str | None = subject if subject.strip() else None
    else:
        reply = latest_reply(subject)
    if reply is None and not (budget is not None and any(tool_cards)):
        return SelfCheckResult(passed=True)
    reply = reply or ""
    issues, present, cards = _block_issues(reply, lang)
    for name in sorted(set(required_names) - present):
        error = make_error("selfcheck.name_missing", "", lang, name=name)
        issues.append(SelfCheckIssue(name, None, error.code, error.path, error.message))
    if budget is not None and budget.limited:
        issues.extend(
            SelfCheckIssue("", None, e.code, e.path, e.message)
            for e in budget_errors([*cards, *tool_cards], budget, lang)
        )
    if not issues:
        return SelfCheckResult(passed=True, inspected=reply)
    return SelfCheckResult(
        passed=False,
        issues=tuple(issues),
        inspected=reply,
        diagnostic=diagnostic_text(issues, lang),
        failed_names=frozenset(i.name for i in issues if i.name),
    )


def _block_issues(reply: str, lang: str) -> tuple[list[SelfCheckIssue], set[str], list[int]]:
    """The reply's invalid blocks as issues, the names of its blocks (valid or not), and
    each valid card's number of questions."""
    segments = parse_with_names(
        reply,
        message_id="selfcheck",
        role="assistant",
        lang=lang,
        names=SELF_CHECK_NAMES,
        unclosed_fence_invalid=True,
    )
    issues: list[SelfCheckIssue] = []
    present: set[str] = set()
    cards: list[int] = []
    for segment in segments:
        if isinstance(segment, QuestionnaireSegment):
            present.add(segment.name)
            cards.append(len(segment.questionnaire.questions))
        elif isinstance(segment, InvalidSegment):
            present.add(segment.name)
            issues.extend(
                SelfCheckIssue(segment.name, segment.encoding, e.code, e.path, e.message)
                for e in segment.errors
            )
    return issues, present, cards


DIAGNOSTIC_ISSUES = 50
"""Issues listed in the repair request; a model fixes the rest by the same pattern."""


def diagnostic_text(issues: Sequence[SelfCheckIssue], lang: str) -> str:
    """The hidden repair request listing the issues (the first ``DIAGNOSTIC_ISSUES``:
    a hostile reply must not turn into a huge prompt)."""
    lines = [text("text.diagnostic.head", lang)]
    for issue in issues[:DIAGNOSTIC_ISSUES]:
        where = (issue.name or "budget") + (f" ({issue.encoding})" if issue.encoding else "")
        path = f" {issue.path}" if issue.path else ""
        lines.append(f"- {where}{path}: {issue.message} [{issue.code}]")
    more = len(issues) - DIAGNOSTIC_ISSUES
    if more > 0:
        lines.append(text("text.diagnostic.more", lang, count=str(more)))
    lines.append(text("text.diagnostic.repair", lang))
    lines.append(text("text.diagnostic.provenance", lang))
    return "\n".join(lines)

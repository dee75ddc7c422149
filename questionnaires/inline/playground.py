"""The protocol playground: one assistant (or user) message → segments, cards, self-check.

Nothing is stored; cards render in preview mode (never submittable).  Markdown segments
are shown as escaped text: the playground debugs the protocol, not Markdown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from questionnaires.inline.presenter import MessageInput, MessageState
from questionnaires.inline.render import plain_markdown, render_message
from questionnaires.protocol import SelfCheckResult, parse_message, self_check
from questionnaires.protocol.jsontypes import JsonValue

MAX_CHARS = 200_000


@dataclass(frozen=True, slots=True)
class Example:
    """A message the playground's "Load an example" puts in the editor (`?example=<slug>`)."""

    slug: str
    title: str | Promise
    content: dict[str, str]  # by language; "en" when the page's language has none

    def text(self, lang: str) -> str:
        return self.content.get(lang, self.content["en"])


EXAMPLES = (
    Example(
        "yaml-single",
        _("Fenced YAML: one question"),
        {
            "en": "Which plan should I set up for you?\n\n```questionnaire\ntitle: Your plan\n"
            "questions:\n  - type: single_choice\n    text: Which plan suits you?\n"
            "    options:\n      - Basic\n      - Pro\n      - Team\n    default: Pro\n"
            "    allow_other: true\n```\n",
            "zh-hans": "我该为你开通哪个套餐？\n\n```questionnaire\ntitle: 你的套餐\n"
            "questions:\n  - type: single_choice\n    text: 哪个套餐适合你？\n"
            "    options:\n      - 基础版\n      - 专业版\n      - 团队版\n    default: 专业版\n"
            "    allow_other: true\n```\n",
        },
    ),
    Example(
        "yaml-multi",
        _("Fenced YAML: several questions"),
        {
            "en": "A few questions before I plan the trip.\n\n```questionnaire\ntitle: Trip plan\n"
            "questions:\n  - type: multi_choice\n    text: How do you want to travel?\n"
            "    options: [Train, Plane, Car]\n    default: [Train]\n"
            "  - type: free_text\n    text: Anything else I should know?\n    default: ''\n```\n",
            "zh-hans": "规划行程之前，先问几个问题。\n\n```questionnaire\ntitle: 旅行计划\n"
            "questions:\n  - type: multi_choice\n    text: 你想怎么出行？\n"
            "    options: [火车, 飞机, 汽车]\n    default: [火车]\n"
            "  - type: free_text\n    text: 还有什么需要我知道的吗？\n    default: ''\n```\n",
        },
    ),
    Example(
        "xml-json",
        _("XML+JSON"),
        {
            "en": "The same protocol in its XML+JSON encoding.\n\n<questionnaire>"
            '{"title":"Next step","questions":[{"id":"speed","type":"single_choice",'
            '"text":"How fast should the next step be?","options":[{"value":"fast",'
            '"label":"Fast"},{"value":"careful","label":"Careful"}],"default":"careful"},'
            '{"id":"notes","type":"text","text":"Notes for the next step","default":""}]}'
            "</questionnaire>\n",
            "zh-hans": "同样的协议，使用 XML+JSON 编码。\n\n<questionnaire>"
            '{"title":"下一步","questions":[{"id":"speed","type":"single_choice",'
            '"text":"下一步应该多快？","options":[{"value":"fast","label":"快"},'
            '{"value":"careful","label":"稳妥"}],"default":"careful"},'
            '{"id":"notes","type":"text","text":"下一步的备注","default":""}]}'
            "</questionnaire>\n",
        },
    ),
    Example(
        "invalid",
        _("Invalid (self-check flags it)"),
        {
            "en": "This one is wrong on purpose: `multiple_choice` is not a fenced YAML type.\n\n"
            "```questionnaire\ntitle: Self-check demo\nquestions:\n  - type: multiple_choice\n"
            "    text: Which colours do you like?\n    options:\n      - Red\n      - Blue\n"
            "    default: []\n```\n",
            "zh-hans": "这一份故意写错了：`multiple_choice` 不是 fenced YAML 的题型。\n\n"
            "```questionnaire\ntitle: 自检演示\nquestions:\n  - type: multiple_choice\n"
            "    text: 你喜欢哪些颜色？\n    options:\n      - 红色\n      - 蓝色\n"
            "    default: []\n```\n",
        },
    ),
)
EXAMPLES_BY_SLUG = {example.slug: example for example in EXAMPLES}


@dataclass(frozen=True, slots=True)
class SegmentRow:
    index: int
    kind: str
    name: str
    encoding: str
    questionnaire_id: str
    errors: tuple[Mapping[str, JsonValue], ...]
    raw: str
    json: str


@dataclass(frozen=True, slots=True)
class PlaygroundResult:
    content: str
    role: str
    rows: tuple[SegmentRow, ...]
    cards_html: SafeString | str
    self_check: SelfCheckResult | None
    too_long: bool = False


def playground_result(content: str, *, role: str, lang: str) -> PlaygroundResult:
    role = "user" if role == "user" else "assistant"
    if len(content) > MAX_CHARS:
        return PlaygroundResult(content, role, (), "", None, too_long=True)
    segments = parse_message(content, message_id="playground", role=role, lang=lang)
    rows = []
    for index, segment in enumerate(segments, start=1):
        data = segment.to_dict()
        rows.append(
            SegmentRow(
                index=index,
                kind=segment.kind,
                name=str(data.get("name", "")),
                encoding=str(data.get("encoding", "")),
                questionnaire_id=str(data.get("questionnaire_id", "")),
                errors=tuple(e.to_dict() for e in getattr(segment, "errors", ())),
                raw=segment.raw,
                json=json.dumps(data, ensure_ascii=False, indent=2),
            )
        )
    message = MessageInput(id="playground", role=role, content=content)
    rendered = render_message(
        message, MessageState(preview=True), markdown=lambda: plain_markdown, lang=lang
    )
    check = self_check(content, lang=lang) if role == "assistant" and content.strip() else None
    return PlaygroundResult(content, role, tuple(rows), rendered.html, check)

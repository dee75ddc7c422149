"""Chinese copy uses full-width punctuation (，。：？！（）；……), never ASCII next to Chinese.

Checked: every msgstr of the zh-Hans catalog, and every string of the zh-Hans YAML the
product shows (ask definitions, scripted agents) with code left out — fenced blocks and
`inline code` are protocol text the parser reads, so their ASCII stays.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
ZH_YAML = sorted(
    [
        *ROOT.glob("questionnaires/asks/definitions/*.zh-hans.yaml"),
        *ROOT.glob("chat/agent/scripts/*.zh-hans.yaml"),
    ]
)
STRING = r'"(?:[^"\\]|\\.)*"'
HAN = "\u3400-\u4dbf\u4e00-\u9fff"
# Han characters, CJK punctuation, full-width forms and the Chinese quotes “”.
CJK = f"{HAN}\u3000-\u303f\uff00-\uffef\u201c\u201d"
# ASCII , . : ? ! ( ) ; touching Chinese (one space between still counts), or "..."
# after it (Chinese uses ……). A dot that starts a name (".zip") is not punctuation.
MARK = r"(?:\.\.\.|[,:?!();]|\.(?![A-Za-z0-9]))"
ASCII_NEXT_TO_CHINESE = re.compile(rf"(?<=[{CJK}]) ?{MARK}|{MARK} ?(?=[{CJK}])")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
# Justified exceptions: ASCII that is syntax the reader types or reads as code.
ALLOWED = {
    # The header format of an MCP server's "Headers" field: the line is literally
    # `Name: value` (an HTTP header), so its colon is the ASCII one.
    "“名称: 值”",
}


def _catalog() -> Iterator[tuple[str, str]]:
    """(msgid, msgstr) for every msgstr, plural forms included."""
    for block in PO.read_text(encoding="utf-8").split("\n\n"):
        msgid = re.search(r"^msgid ((?:\".*\"\n?)+)", block, re.M)
        if not msgid:
            continue
        key = "".join(json.loads(p) for p in re.findall(STRING, msgid.group(1)))
        if not key:
            continue  # the header
        for found in re.finditer(r"^msgstr(?:\[\d\])? ((?:\".*\"\n?)+)", block, re.M):
            yield key, "".join(json.loads(p) for p in re.findall(STRING, found.group(1)))


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def offences(text: str) -> list[str]:
    """Each ASCII punctuation mark next to Chinese in `text`, with some context."""
    prose = CODE.sub(" ", text)
    for allowed in ALLOWED:
        prose = prose.replace(allowed, " ")
    return [
        prose[max(0, m.start() - 8) : m.end() + 8] for m in ASCII_NEXT_TO_CHINESE.finditer(prose)
    ]


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("请稍候...", True),
        ("已保存.", True),
        ("名称: 值", True),
        ("你好, 世界", True),
        ("(可选)", True),
        ("真的吗?", True),
        ("已保存。", False),
        ("共 %(n)s 个问题。", False),
        ("使用 `a: b` 格式。", False),
        ("每行一个“名称: 值”。", False),
        ("压缩包必须是 .zip 或 .tar.gz 文件。", False),
        ("发送 Authorization: Bearer <token>。", False),
    ],
)
def test_the_rule_flags_ascii_next_to_chinese_only(text, bad):
    assert bool(offences(text)) is bad


def test_the_catalog_uses_full_width_punctuation():
    found = [(key, hit) for key, value in _catalog() for hit in offences(value)]
    assert found == []


def test_zh_yaml_copy_uses_full_width_punctuation():
    assert ZH_YAML, "no zh-Hans YAML found"
    found = []
    for path in ZH_YAML:
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            for text in _strings(document):
                found += [(path.name, hit) for hit in offences(text)]
    assert found == []

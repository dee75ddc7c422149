"""Reading a value out of free text for one ask: option labels and synonyms, numbers
for scales, yes/no words in English and Simplified Chinese.

Deterministic and conservative: an ambiguous reply extracts nothing (the caller keeps the
raw text), because a wrong value in the consultation state is worse than a missing one.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from chat.core.metadata import AskOption, AskPayload
from questionnaires.protocol.ask_payload import scale_value
from questionnaires.protocol.jsontypes import Json

CONFIDENCE_CLICK = 1.0
CONFIDENCE_EXACT = 0.9  # the reply is exactly a label, synonym, number or yes/no word
CONFIDENCE_CONTAINED = 0.7  # a label or synonym appears inside a longer reply
CONFIDENCE_VERBATIM = 0.5  # nothing matched; the raw text itself is the value

YES_WORDS = {
    "yes", "y", "yeah", "yep", "yup", "sure", "true", "correct", "right", "ok", "okay",
    "affirmative", "definitely", "of course", "是", "是的", "对", "对的", "有", "好",
    "好的", "嗯", "没错", "确定", "当然", "可以", "需要", "要",
}  # fmt: skip
NO_WORDS = {
    "no", "n", "nope", "nah", "false", "not", "never", "none", "negative", "not really",
    "否", "不", "不是", "没有", "无", "没", "不对", "不要", "不需要", "并没有", "从不", "不会",
}  # fmt: skip
NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
    "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
}  # fmt: skip
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Extraction:
    value: Json
    display_text: str
    confidence: float


def normalize(text: str) -> str:
    """Case-folded, width-folded, punctuation-free, single-spaced."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(c)[0] in "PSZ" else c for c in text)
    return " ".join(text.split())


def extract(ask: AskPayload, text: str) -> Extraction | None:
    """The value `text` gives for `ask`, or None when it can't be read confidently."""
    if not text.strip():
        return None
    if ask["type"] == "scale":
        return _scale(ask, text)
    if ask["type"] == "boolean":
        return _boolean(ask, text) or _options(ask, text)
    if ask["type"] == "options":
        return _options(ask, text)
    return None


def _names(option: AskOption) -> list[str]:
    names = [option["label"], *option.get("synonyms", [])]
    if isinstance(option["value"], str):
        names.append(option["value"].replace("_", " "))
    return [n for n in (normalize(name) for name in names) if n]


def _options(ask: AskPayload, text: str) -> Extraction | None:
    said = normalize(text)
    exact = [o for o in ask["options"] if said in _names(o)]
    if len(exact) == 1:
        return Extraction(exact[0]["value"], exact[0]["label"], CONFIDENCE_EXACT)
    # Every label/synonym found inside the reply counts; a match that is part of a longer
    # match ("pain" inside "no pain") is dropped; two options left is ambiguous.
    matches: list[tuple[str, int]] = []
    padded = f" {said} "
    for index, option in enumerate(ask["options"]):
        for name in _names(option):
            found = name in said if _is_cjk(name) else f" {name} " in padded
            if found:
                matches.append((name, index))
    kept = {
        index
        for name, index in matches
        if not any(name != other and name in other for other, _ in matches)
    }
    if len(kept) != 1:
        return None
    option = ask["options"][kept.pop()]
    return Extraction(option["value"], option["label"], CONFIDENCE_CONTAINED)


def _boolean(ask: AskPayload, text: str) -> Extraction | None:
    said = normalize(text)
    yes, no = ask["options"][0], ask["options"][1]
    if said in YES_WORDS:
        return Extraction(True, yes["label"], CONFIDENCE_EXACT)
    if said in NO_WORDS:
        return Extraction(False, no["label"], CONFIDENCE_EXACT)
    first = said.split(" ")[0]
    # Chinese replies put the negation first ("不疼", "没有肿"); test "no" before "yes"
    # because "不是" contains "是".
    if first in NO_WORDS or said[:1] in {"不", "没", "无"}:
        return Extraction(False, no["label"], CONFIDENCE_CONTAINED)
    if first in YES_WORDS or said[:1] in {"是", "对", "有"}:
        return Extraction(True, yes["label"], CONFIDENCE_CONTAINED)
    return None


def _scale(ask: AskPayload, text: str) -> Extraction | None:
    text = unicodedata.normalize("NFKC", text)
    # "7/10", "7 out of 10", "满分10分打7": the scale's own maximum is not the answer.
    top = re.escape(str(ask["max"]))
    text = re.sub(rf"(/\s*{top}|out of\s*{top}|满分\s*{top}\s*分?)", " ", text, flags=re.I)
    said = normalize(text)
    candidates: list[str | int] = _NUMBER_RE.findall(text)
    if not candidates:
        candidates = [NUMBER_WORDS[w] for w in said.split(" ") if w in NUMBER_WORDS]
        candidates += [NUMBER_WORDS[c] for c in said if _is_cjk(c) and c in NUMBER_WORDS]
    values = {v for v in (scale_value(ask, c) for c in candidates) if v is not None}
    if len(values) != 1:
        return None
    value = values.pop()
    exact = said == normalize(str(value))
    return Extraction(value, str(value), CONFIDENCE_EXACT if exact else CONFIDENCE_CONTAINED)


def _is_cjk(text: str) -> bool:
    return any("\u3400" <= c <= "\u9fff" for c in text)

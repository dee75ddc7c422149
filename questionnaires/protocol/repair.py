"""Conversation repair (issue 36): reading a typed reply against a waiting question.

Pure: no Django, no database. The service (`questionnaires.repair`) asks each waiting
question's kind for its `Pending.response_schema` (the JSON Schema of the answer its
`resolve` takes) and this module reads the person's words against it:

- `intent(text)`: is the reply a *skip* ("never mind", "跳过"), an *amend* ("actually, make
  it X", "不对，是X": the rest is X) or possibly an *answer*;
- `fields_of(schema)`: the answerable fields of a response schema — a choice (`oneOf` of
  `const`/`title`, or `enum`; `examples` on an option are its synonyms), a multiple choice
  (an array of those), a yes/no (`boolean`) or a number (`number`/`integer` with
  `minimum`/`maximum`). A free-text field is never matched: any words would "match" it, so
  a reply to it is the person's message, not a guess at their answer;
- `match_reply(schema, text)`: the payload the reply gives, by field, or None.

Conservative like `questionnaires.asks.extract`: a reply that fits two options of one
question fills nothing for it, and a value is only ever one the question offers (or a
number within its range). `Match.exact` says the reply *is* the answer (it equals a label,
value, synonym, yes/no word or number); `Match.certain` that it is unambiguous enough to
answer a single question without a confirming click: exact, or the answer with at most a
couple of words around it and no negation ("my left knee", "5 nights"; not "I think the
Azores would be lovely", never "not the Azores").
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .jsontypes import JsonValue

IGNORED_KEYS = frozenset({"other_text", "skipped", "typed", "text"})

YES_WORDS = frozenset(
    {
        "yes", "y", "yeah", "yep", "yup", "sure", "true", "ok", "okay", "correct", "right",
        "of course", "definitely", "是", "是的", "好", "好的", "对", "对的", "嗯", "可以",
        "没错", "当然", "要", "有",
    }
)  # fmt: skip
NO_WORDS = frozenset(
    {
        "no", "n", "nope", "nah", "false", "not really", "never", "不", "否", "不是",
        "不要", "没有", "没", "无", "不用", "不对",
    }
)  # fmt: skip
NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
    "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
}  # fmt: skip
SKIP_PHRASES = (
    "never mind", "nevermind", "skip that", "skip this", "skip it", "skip", "forget it",
    "forget about it", "i'd rather not say", "i would rather not say", "rather not say",
    "pass", "算了", "跳过", "跳过吧", "不用了", "不想回答", "略过", "算了吧",
)  # fmt: skip
# "actually, make it X" / "不对，是X": what follows the prefix is the new answer.
AMEND_PREFIXES = (
    "actually make it", "actually change it to", "actually it's", "actually it is",
    "actually i meant", "actually", "make it", "change it to", "change that to",
    "i meant", "sorry i meant", "no i meant", "correction",
    "不对是", "不对应该是", "不对改成", "改成", "我是说", "应该是", "更正",
)  # fmt: skip
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
MAX_TEXT = 2000  # longer replies are messages, not answers


def normalize(text: str) -> str:
    """Case-folded, width-folded, punctuation-free, single-spaced."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in text)
    return " ".join(text.split())


def _is_cjk(text: str) -> bool:
    return any("\u3400" <= c <= "\u9fff" for c in text)


def _contains(said: str, name: str) -> bool:
    """`name` occurs in `said` as whole words (or anywhere, for Chinese)."""
    if not name:
        return False
    if _is_cjk(name):
        return name in said
    return f" {name} " in f" {said} "


# --- intent --------------------------------------------------------------------------------

IntentKind = Literal["answer", "skip", "amend"]


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    rest: str = ""  # for "amend": the new answer's words


def intent(text: str) -> Intent:
    """Whether `text` skips the waiting question, amends the last answer, or may answer."""
    said = normalize(text)
    for phrase in SKIP_PHRASES:
        if said == phrase or said == f"{phrase} please" or said == f"please {phrase}":
            return Intent("skip")
    for prefix in (normalize(p) for p in AMEND_PREFIXES):
        compact = said.replace(" ", "") if _is_cjk(prefix) else said
        if compact.startswith(prefix) and len(compact) > len(prefix):
            rest = compact[len(prefix) :].strip()
            if not _is_cjk(prefix) and not said.startswith(prefix + " "):
                continue  # "actuallyX" is a word, not a prefix
            if rest:
                return Intent("amend", rest)
    return Intent("answer")


# --- fields of a response schema ------------------------------------------------------------

FieldKind = Literal["choice", "multi", "boolean", "number"]


@dataclass(frozen=True)
class Option:
    value: JsonValue
    label: str
    names: tuple[str, ...]  # normalized label, value and synonyms


@dataclass(frozen=True)
class Field:
    path: tuple[str, ...]  # where the value goes in the payload
    kind: FieldKind
    title: str = ""
    options: tuple[Option, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False


def _option(value: JsonValue, label: object, synonyms: object) -> Option:
    shown = label if isinstance(label, str) and label else str(value)
    names = [shown]
    if isinstance(value, str):
        names += [value, value.replace("_", " ")]
    if isinstance(synonyms, list):
        names += [s for s in synonyms if isinstance(s, str)]
    normalized = tuple(dict.fromkeys(n for n in (normalize(x) for x in names) if n))
    return Option(value, shown, normalized)


def _options(schema: Mapping[str, object]) -> tuple[Option, ...] | None:
    one_of = schema.get("oneOf")
    if isinstance(one_of, list):
        found = [
            _option(o["const"], o.get("title"), o.get("examples"))
            for o in one_of
            if isinstance(o, Mapping) and "const" in o
        ]
        return tuple(found) if found else None
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        names = schema.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(enum) else enum
        return tuple(_option(v, lab, None) for v, lab in zip(enum, labels, strict=True))
    return None


def _field(path: tuple[str, ...], schema: Mapping[str, object]) -> Field | None:
    title = schema.get("title")
    title = title if isinstance(title, str) else ""
    options = _options(schema)
    kind = schema.get("type")
    if kind == "boolean":  # yes/no words, and the card's own words for each side
        labelled = tuple(o for o in options or () if isinstance(o.value, bool))
        return Field(path, "boolean", title, labelled)
    if options is not None:
        return Field(path, "choice", title, options)
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        items = _options(schema["items"])  # type: ignore[arg-type]
        return Field(path, "multi", title, items) if items else None
    if kind == "boolean":
        return Field(path, "boolean", title)
    if kind in ("number", "integer"):
        low, high = schema.get("minimum"), schema.get("maximum")
        return Field(
            path,
            "number",
            title,
            minimum=float(low) if isinstance(low, int | float) else None,
            maximum=float(high) if isinstance(high, int | float) else None,
            integer=kind == "integer",
        )
    return None


def fields_of(schema: object, path: tuple[str, ...] = ()) -> tuple[Field, ...]:
    """The answerable fields of a response schema, in order (nested objects flattened)."""
    if not isinstance(schema, Mapping) or len(path) > 4:
        return ()
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, Mapping):
        if not isinstance(properties, Mapping):
            return ()
        found: list[Field] = []
        for key, sub in properties.items():
            if key in IGNORED_KEYS or not isinstance(sub, Mapping):
                continue
            found.extend(fields_of(sub, (*path, str(key))))
        return tuple(found)
    one = _field(path, schema)
    return (one,) if one is not None and path else ()


# --- matching --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    field: Field
    value: JsonValue
    label: str  # what the card shows for it
    exact: bool
    # Sure enough to answer without a click: exact, or the answer with at most a couple of
    # words around it ("my left knee", "5 nights", "加那利吧") and no negation near an
    # option ("not the Azores" is never taken as the Azores without a click).
    sure: bool = False


@dataclass(frozen=True)
class Match:
    hits: tuple[Hit, ...]
    fields: int  # how many answerable fields the question has
    payload: dict[str, JsonValue] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        """The reply is exactly one question's answer, and that is the whole question."""
        return self.fields == 1 and len(self.hits) == 1 and self.hits[0].exact

    @property
    def certain(self) -> bool:
        """Unambiguous enough to answer without a confirming click: the whole question (one
        field) and a sure reading of it (see `Hit.sure`)."""
        return self.fields == 1 and len(self.hits) == 1 and self.hits[0].sure

    @property
    def summary(self) -> tuple[tuple[str, str], ...]:
        """(question, answer) pairs as the confirmation shows them."""
        return tuple((h.field.title, h.label) for h in self.hits)


NEGATIONS = frozenset(
    {
        "not", "don't", "dont", "no", "never", "isn't", "isnt", "without", "except",
        "instead", "rather", "nor", "neither", "but", "other", "不", "没", "别", "非", "不要",
        "不是", "除了",
    }
)  # fmt: skip
MAX_AROUND = 2  # words (or, in Chinese, characters) around a sure answer


def _around(said: str, name: str) -> int:
    """How many words (characters, for Chinese) of `said` are not `name`."""
    if _is_cjk(name):
        return max(len(said.replace(" ", "")) - len(name.replace(" ", "")), 0)
    return max(len(said.split()) - len(name.split()), 0)


def _negated(said: str) -> bool:
    words = set(said.split())
    return bool(words & NEGATIONS) or any(n in said for n in NEGATIONS if _is_cjk(n))


def _choice(f: Field, said: str) -> Hit | None:
    exact = [o for o in f.options if said in o.names]
    if len(exact) == 1:
        return Hit(f, exact[0].value, exact[0].label, True, True)
    if exact:
        return None
    found = [
        (name, i) for i, o in enumerate(f.options) for name in o.names if _contains(said, name)
    ]
    kept = {i for name, i in found if not any(name != n and name in n for n, _ in found)}
    if len(kept) != 1:
        return None
    index = kept.pop()
    option = f.options[index]
    name = max((n for n, i in found if i == index), key=len)
    sure = _around(said, name) <= MAX_AROUND and not _negated(said)
    return Hit(f, option.value, option.label, False, sure)


def _multi(f: Field, said: str) -> Hit | None:
    found = [
        (name, i) for i, o in enumerate(f.options) for name in o.names if _contains(said, name)
    ]
    kept = sorted({i for name, i in found if not any(name != n and name in n for n, _ in found)})
    if not kept:
        return None
    chosen = [f.options[i] for i in kept]
    return Hit(f, [o.value for o in chosen], ", ".join(o.label for o in chosen), False)


def _boolean(f: Field, said: str) -> Hit | None:
    named = _choice(f, said) if f.options else None
    if named is not None and named.exact:
        return named
    labels = {o.value: o.label for o in f.options}
    yes, no = str(labels.get(True, "Yes")), str(labels.get(False, "No"))
    if said in YES_WORDS:
        return Hit(f, True, yes, True, True)
    if said in NO_WORDS:
        return Hit(f, False, no, True, True)
    first = said.split(" ")[0] if said else ""
    # negation first: "不是" contains "是"
    if first in NO_WORDS or (said[:1] in {"不", "没", "无"} and _is_cjk(said[:1])):
        return Hit(f, False, no, False, len(said.split()) <= 1 + MAX_AROUND)
    if first in YES_WORDS:
        return Hit(f, True, yes, False, len(said.split()) <= 1 + MAX_AROUND)
    return named


def _number(f: Field, text: str, said: str) -> Hit | None:
    folded = unicodedata.normalize("NFKC", text)
    if f.maximum is not None:  # "7/10", "7 out of 10": the scale's top is not the answer
        top = re.escape(_shown(f.maximum))
        folded = re.sub(rf"(/\s*{top}|out of\s*{top}|满分\s*{top}\s*分?)", " ", folded, flags=re.I)
    numbers: list[float] = [float(n) for n in _NUMBER_RE.findall(folded)]
    if not numbers:
        numbers = [float(NUMBER_WORDS[w]) for w in said.split(" ") if w in NUMBER_WORDS]
        if not numbers and len(said) <= 3:
            numbers = [float(NUMBER_WORDS[c]) for c in said if c in NUMBER_WORDS]
    values = {n for n in numbers if _in_range(f, n)}
    if len(values) != 1:
        return None
    number = values.pop()
    value: JsonValue = int(number) if number.is_integer() else number
    exact = said == normalize(_shown(number))
    return Hit(f, value, _shown(number), exact, exact or len(said.split()) <= 1 + MAX_AROUND)


def _in_range(f: Field, n: float) -> bool:
    if not math.isfinite(n) or (f.integer and not n.is_integer()):
        return False
    return (f.minimum is None or n >= f.minimum) and (f.maximum is None or n <= f.maximum)


def _shown(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else str(n)


def payload_put(payload: dict[str, JsonValue], path: Sequence[str], value: JsonValue) -> None:
    """Set `value` at `path` in a payload, creating the objects on the way."""
    node = payload
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value


def match_reply(schema: object, text: str) -> Match | None:
    """What `text` answers of the question described by `schema`, or None.

    Yes/no words and bare numbers only count when the question has exactly one field of
    that kind (two yes/no questions and a "yes" are ambiguous)."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return None
    said = normalize(text)
    if not said:
        return None
    fields = fields_of(schema)
    by_kind = {k: sum(1 for f in fields if f.kind == k) for k in ("boolean", "number")}
    hits: list[Hit] = []
    for f in fields:
        hit: Hit | None
        if f.kind == "choice":
            hit = _choice(f, said)
        elif f.kind == "multi":
            hit = _multi(f, said)
        elif f.kind == "boolean":
            hit = _boolean(f, said) if by_kind["boolean"] == 1 else None
        else:
            hit = _number(f, text, said) if by_kind["number"] == 1 else None
        if hit is not None:
            hits.append(hit)
    if not hits:
        return None
    payload: dict[str, JsonValue] = {}
    for hit in hits:
        payload_put(payload, hit.field.path, hit.value)
    return Match(tuple(hits), len(fields), payload)

"""Localized messages for every error code (English and Simplified Chinese).

The code is the contract; the message is for people and models.  Placeholders are
filled from the error's ``details`` dict.  The full code table is in ``README.md``.
(Named ``error_messages`` so it is never confused with the chat's ``Message`` model.)
"""

from __future__ import annotations

import json
import math
from typing import Any

from .limits import SHOWN_CHARS, SHOWN_ITEMS
from .segments import ProtocolError

_Catalog = dict[str, tuple[str, str]]

# Messages shared by questionnaire_async (``questionnaire.start.*``) and the XML+JSON
# reader (``questionnaire.json.*``): one normalizer, one wording.  ``note.*`` are not
# errors: they say what was accepted leniently.
_NORMALIZER: _Catalog = {
    "questions_must_be_list": (
        "`questions` must be a list of question objects (got {received_type}).",
        "`questions` 必须是问题对象数组（实际为 {received_type}）。",
    ),
    "questions_empty": ("`questions` must not be empty.", "`questions` 不能为空数组。"),
    "title_invalid": (
        "`title` must be a string (got {received_type}); leave it out for no title.",
        "`title` 必须是字符串（实际为 {received_type}）；不需要标题时请省略该字段。",
    ),
    "question_id_invalid": (
        "`id` must be a non-empty string (got {received_type}); leave it out to get q1, q2….",
        "`id` 必须是非空字符串（实际为 {received_type}）；省略时自动生成 q1、q2……",
    ),
    "question_not_object": (
        "Each question must be an object (got {received_type}).",
        "每个问题必须是对象（实际为 {received_type}）。",
    ),
    "question_type_invalid": (
        "Question type {value} is not one of: {allowed}.",
        "题型 {value} 无效，可选值：{allowed}。",
    ),
    "question_text_required": (
        "The question needs a non-empty `text` (or `title`).",
        "问题必须提供非空的 `text`（或 `title`）。",
    ),
    "question_id_duplicate": (
        "Question id {id} is already used by question {first_index}.",
        "问题 id {id} 与第 {first_index} 题重复。",
    ),
    "question_options_required": (
        "A {type} question needs a non-empty `options` list.",
        "{type} 题必须提供非空的 `options` 数组。",
    ),
    "question_option_invalid": (
        "Invalid option ({reason}); use a non-empty string or {{value, label}} with two "
        "non-empty strings.",
        "选项无效（{reason}）；请使用非空字符串，或 value、label 均为非空字符串的 "
        "{{value, label}} 对象。",
    ),
    "default_type_invalid": (
        "`default` must be {expected} for a {type} question (got {received_type}).",
        "{type} 题的 `default` 必须是{expected}（实际为 {received_type}）。",
    ),
    "default_value_not_in_options": (
        "`default` {value} is not one of the option values: {allowed} (use the value, "
        "not the label).",
        "`default` {value} 不在选项值中：{allowed}（请使用 value，而不是 label）。",
    ),
    "default_list_invalid_items": (
        "`default` items {invalid_items} are not option values ({allowed}).",
        "`default` 中的 {invalid_items} 不是选项值（{allowed}）。",
    ),
    "allow_other_type_invalid": (
        "`allow_other` must be true or false (got {received_type}).",
        "`allow_other` 必须是布尔值（实际为 {received_type}）。",
    ),
    "questions_too_many": (
        "At most {limit} questions are allowed (got {count}).",
        "最多允许 {limit} 个问题（实际 {count} 个）。",
    ),
    "options_too_many": (
        "At most {limit} options are allowed (got {count}).",
        "最多允许 {limit} 个选项（实际 {count} 个）。",
    ),
    "text_too_long": (
        "This text is {length} characters long; the limit is {limit}.",
        "该文本长度为 {length} 个字符，上限为 {limit}。",
    ),
    "note.field_ignored": (
        "Field {field} was ignored: it has no meaning here.",
        "字段 {field} 在此处无意义，已忽略。",
    ),
    "note.id_converted": (
        "The number id was used as the string {id}; write ids as strings.",
        "数字 id 已按字符串 {id} 使用；请把 id 写成字符串。",
    ),
    "note.default_duplicate_removed": (
        "Default {value} was listed twice; the repeat was dropped.",
        "默认值 {value} 重复出现，已去掉重复项。",
    ),
}

_TAGS: _Catalog = {
    "tag.mismatch": (
        "Opening tag <{open}> is closed by </{close}>; the names must match.",
        "开始标签 <{open}> 与结束标签 </{close}> 名称不一致。",
    ),
    "tag.unclosed": ("<{name}> has no closing </{name}> tag.", "<{name}> 缺少结束标签 </{name}>。"),
    "tag.self_closing": (
        "<{name}/> is not allowed; write <{name}>{{…json…}}</{name}>.",
        "不支持自闭合 <{name}/>；请写成 <{name}>{{…json…}}</{name}>。",
    ),
    "json.too_large": (
        "The JSON body is {size} bytes; the limit is {limit}.",
        "JSON 内容为 {size} 字节，超过上限 {limit}。",
    ),
    "json.syntax": (
        "Invalid JSON at line {line}, column {column}: {problem}.",
        "JSON 语法错误（第 {line} 行第 {column} 列）：{problem}。",
    ),
    "blocks.too_many": (
        "This message has {count} protocol blocks; at most {limit} are read, the rest is "
        "shown as text.",
        "此消息包含 {count} 个协议块；最多读取 {limit} 个，其余内容按文本显示。",
    ),
    "tag.attributes": (
        "<{name}> takes no attributes (found {attributes}); write <{name}>{{…json…}}</{name}>.",
        "<{name}> 标签不能带属性（发现 {attributes}）；请写成 <{name}>{{…json…}}</{name}>。",
    ),
    "json.duplicate_key": (
        "Key {key} appears twice in the same object.",
        "同一对象中键 {key} 重复出现。",
    ),
    "json.too_deep": (
        "The JSON body nests lists/objects more than {limit} levels deep.",
        "JSON 内容的数组/对象嵌套超过 {limit} 层。",
    ),
    "json.not_object": (
        "The JSON body must be an object (got {received_type}).",
        "JSON 内容必须是对象（实际为 {received_type}）。",
    ),
}

_FENCED: _Catalog = {
    "questionnaire.fence.unclosed": (
        "The ```{name} fence is never closed; end it with a line of at least {length} backticks.",
        "```{name} 围栏没有结束；请用至少 {length} 个反引号独占一行结束。",
    ),
    "questionnaire.fence.nested": (
        "Line {line} is a code fence; a fenced questionnaire must not contain fences.",
        "第 {line} 行是代码围栏；问卷内部不能嵌套代码围栏。",
    ),
    "questionnaire.preface.required": (
        "Write some ordinary text before the first fenced questionnaire; it can't be the whole message.",
        "第一个 fenced 问卷前必须有非空的普通说明文字，问卷不能是整条消息的唯一内容。",
    ),
    "questionnaire.yaml.too_large": (
        "The YAML body is {size} bytes; the limit is {limit}.",
        "YAML 内容为 {size} 字节，超过上限 {limit}。",
    ),
    "questionnaire.yaml.not_block": (
        "The fenced body must be block YAML, not JSON or a flow collection.",
        "围栏内容必须是块状 YAML，不能是 JSON 或流式集合。",
    ),
    "questionnaire.yaml.syntax": (
        "Invalid YAML at line {line}, column {column}: {problem}.",
        "YAML 语法错误（第 {line} 行第 {column} 列）：{problem}。",
    ),
    "questionnaire.yaml.alias_forbidden": (
        "YAML anchors and aliases (&, *) are not allowed.",
        "不允许使用 YAML 锚点和别名（&、*）。",
    ),
    "questionnaire.yaml.tag_forbidden": (
        "YAML tags such as {tag} are not allowed.",
        "不允许使用 YAML 标签（如 {tag}）。",
    ),
    "questionnaire.yaml.too_deep": (
        "The YAML nests collections more than {limit} levels deep.",
        "YAML 集合嵌套超过 {limit} 层。",
    ),
    "questionnaire.yaml.duplicate_key": ("Key {key} appears twice.", "键 {key} 重复出现。"),
    "questionnaire.yaml.key_invalid": ("Mapping keys must be strings.", "映射的键必须是字符串。"),
    "questionnaire.yaml.multiple_documents": (
        "Only one YAML document is allowed.",
        "只允许一个 YAML 文档。",
    ),
    "questionnaire.root.not_mapping": (
        "The questionnaire must be a mapping with `title` and `questions` (got {received_type}).",
        "问卷必须是包含 `title` 和 `questions` 的映射（实际为 {received_type}）。",
    ),
    "questionnaire.field.unknown": (
        "Unknown field {field}; allowed: {allowed}.",
        "不允许的字段 {field}；只允许：{allowed}。",
    ),
    "questionnaire.title.required": (
        "`title` must be a non-empty string.",
        "`title` 必须是非空字符串。",
    ),
    "questionnaire.questions.required": ("`questions` is required.", "缺少 `questions`。"),
    "questionnaire.questions.type_invalid": (
        "`questions` must be a list (got {received_type}).",
        "`questions` 必须是数组（实际为 {received_type}）。",
    ),
    "questionnaire.questions.empty": ("`questions` must not be empty.", "`questions` 不能为空。"),
    "questionnaire.question.not_mapping": (
        "Each question must be a mapping (got {received_type}).",
        "每个问题必须是映射（实际为 {received_type}）。",
    ),
    "questionnaire.question.type_required": (
        "`type` is required; use one of: {allowed}.",
        "缺少 `type`；可选值：{allowed}。",
    ),
    "questionnaire.question.type_invalid": (
        "Question type {value} is not one of: {allowed} (no aliases).",
        "题型 {value} 无效，只允许：{allowed}（不接受别名）。",
    ),
    "questionnaire.question.text_required": (
        "`text` must be a non-empty string.",
        "`text` 必须是非空字符串。",
    ),
    "questionnaire.default.required": ("`default` is required.", "缺少 `default`。"),
    "questionnaire.options.required": (
        "A {type} question needs `options`.",
        "{type} 题必须提供 `options`。",
    ),
    "questionnaire.options.type_invalid": (
        "`options` must be a list of strings (got {received_type}).",
        "`options` 必须是字符串数组（实际为 {received_type}）。",
    ),
    "questionnaire.options.empty": ("`options` must not be empty.", "`options` 不能为空。"),
    "questionnaire.option.invalid": (
        "Each option must be a non-empty string (got {received_type}).",
        "每个选项必须是非空字符串（实际为 {received_type}）。",
    ),
    "questionnaire.option.duplicate": ("Option {value} appears twice.", "选项 {value} 重复。"),
    "questionnaire.options.forbidden": (
        "A free_text question must not have `options`.",
        "free_text 题不能有 `options`。",
    ),
    "questionnaire.allow_other.type_invalid": (
        "`allow_other` must be true or false (got {received_type}).",
        "`allow_other` 必须是 true 或 false（实际为 {received_type}）。",
    ),
    "questionnaire.questions.too_many": (
        "At most {limit} questions are allowed (got {count}).",
        "最多允许 {limit} 个问题（实际 {count} 个）。",
    ),
    "questionnaire.options.too_many": (
        "At most {limit} options are allowed (got {count}).",
        "最多允许 {limit} 个选项（实际 {count} 个）。",
    ),
    "questionnaire.text.too_long": (
        "This text is {length} characters long; the limit is {limit}.",
        "该文本长度为 {length} 个字符，上限为 {limit}。",
    ),
    "questionnaire.allow_other.forbidden": (
        "A free_text question must not have `allow_other`.",
        "free_text 题不能有 `allow_other`。",
    ),
    "questionnaire.default.type_invalid": (
        "`default` must be {expected} (got {received_type}).",
        "`default` 必须是{expected}（实际为 {received_type}）。",
    ),
    "questionnaire.default.not_in_options": (
        "`default` {value} is not one of the options: {allowed}.",
        "`default` {value} 不在选项中：{allowed}。",
    ),
}

_OTHER: _Catalog = {
    "response.type_invalid": (
        "`type` must be one of {allowed} (got {value}).",
        "`type` 必须是 {allowed} 之一（实际为 {value}）。",
    ),
    "response.questionnaire_id.invalid": (
        "`questionnaire_id` must be a non-empty string.",
        "`questionnaire_id` 必须是非空字符串。",
    ),
    "response.status.invalid": ("`status` must be a string.", "`status` 必须是字符串。"),
    "response.answers.invalid": ("`answers` must be a list.", "`answers` 必须是数组。"),
    "response.answer.invalid": (
        "Each answer must be an object with a string `question_id`.",
        "每个回答必须是包含字符串 `question_id` 的对象。",
    ),
    "answer.question_unknown": (
        "There is no question {question_id}.",
        "问卷中没有问题 {question_id}。",
    ),
    "answer.option_invalid": (
        "{value} is not one of the options: {allowed}.",
        "{value} 不是有效选项：{allowed}。",
    ),
    "answer.required": ("Please choose an answer.", "请选择一个答案。"),
    "answer.other_not_allowed": (
        "This question has no “Other” choice.",
        "此题不允许选择“其他”。",
    ),
    "answer.other_text_required": (
        "Please type your “Other” answer.",
        "请填写“其他”的内容。",
    ),
    "answer.type_invalid": (
        "The answer must be {expected} (got {received_type}).",
        "答案必须是{expected}（实际为 {received_type}）。",
    ),
    "answer.status_invalid": (
        "`status` must be a non-empty string.",
        "`status` 必须是非空字符串。",
    ),
    "selfcheck.name_missing": (
        "The corrected reply must contain the {name} questionnaire again (either encoding).",
        "修复后的回复必须再次包含 {name} 问卷（可切换编码）。",
    ),
}


def _build_catalog() -> _Catalog:
    catalog: _Catalog = {}
    for suffix, pair in _NORMALIZER.items():
        catalog[f"questionnaire.start.{suffix}"] = pair
        catalog[f"questionnaire.json.{suffix}"] = pair
    for suffix, pair in _TAGS.items():
        catalog[f"questionnaire.{suffix}"] = pair
        catalog[f"response.{suffix}"] = pair
    catalog.update(_FENCED)
    catalog.update(_OTHER)
    return catalog


CATALOG: _Catalog = _build_catalog()

# Words the validator puts into ``expected`` details, localized at format time.
_WORDS: dict[str, str] = {
    "a string": "字符串",
    "a list of strings": "字符串数组",
    "a list of option values": "选项值数组",
    "missing value and label": "缺少 value 和 label",
    "empty string": "空字符串",
    "not a string or object": "不是字符串或对象",
    "duplicate value": "值重复",
    "value must be a non-empty string": "value 必须是非空字符串",
    "label must be a non-empty string": "label 必须是非空字符串",
}


def is_zh(lang: str) -> bool:
    """True for any Chinese language tag (``zh``, ``zh-hans``, ``zh-CN`` …)."""
    return lang.lower().startswith("zh")


class _Fill(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


# Details shown verbatim; every other string detail is quoted so blanks stay visible.
_PLAIN_KEYS = frozenset(
    {
        "expected",
        "type",
        "name",
        "open",
        "close",
        "received_type",
        "reason",
        "problem",
        "allowed",
        "attributes",
    }
)


def _show(value: Any, zh: bool, plain: bool) -> str:
    """``value`` for a message: lists and strings are clipped (``limits.SHOWN_*``), so
    a message never grows with the input; ``details`` keep the full value."""
    if isinstance(value, list | tuple):
        shown = ", ".join(_scalar(v, zh, plain) for v in value[:SHOWN_ITEMS]) or "—"
        more = len(value) - SHOWN_ITEMS
        return f"{shown}, … (+{more})" if more > 0 else shown
    return _scalar(value, zh, plain)


def _scalar(value: Any, zh: bool, plain: bool) -> str:
    """One value; a nested list or object is named by its type, never recursed into."""
    if isinstance(value, str):
        text = value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "…"
        if plain:
            return _WORDS.get(text, text) if zh else text
        return json.dumps(text, ensure_ascii=False)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float) or (isinstance(value, int) and -(10**15) < value < 10**15):
        return str(value)
    return type_name(value)  # huge ints (str() may refuse them), lists, objects


def render(code: str, details: dict[str, Any], lang: str) -> str:
    """The localized message for ``code`` with ``details`` filled in."""
    zh = is_zh(lang)
    pair = CATALOG.get(code)
    if pair is None:
        return code
    fill = _Fill({k: _show(v, zh, k in _PLAIN_KEYS) for k, v in details.items()})
    return pair[1 if zh else 0].format_map(fill)


def make_error(code: str, path: str, lang: str, **details: Any) -> ProtocolError:
    """Build a :class:`ProtocolError` with its localized message.

    ``details`` are made JSON-safe and shallow first: a nested list or object (however
    deep the input was) becomes ``"<array>"``/``"<object>"``, an integer too big for
    ``json.dumps`` ``"<number>"``, so serializing an error never recurses or fails.
    """
    safe = {key: _safe_detail(value) for key, value in details.items()}
    return ProtocolError(code=code, path=path, message=render(code, safe, lang), details=safe)


def _safe_detail(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_safe_scalar(item) for item in value]
    return _safe_scalar(value)


def _safe_scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if -(2**63) < value < 2**63 else "<number>"
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    return f"<{type_name(value)}>"


def type_name(value: Any) -> str:
    """A JSON-ish name for the type of ``value`` (used in ``received_type``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__

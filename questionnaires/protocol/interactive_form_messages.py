"""Messages of the ``interactive_form_question`` normalizer and answer check (en, zh-hans).

Keyed by code suffix (``interactive_form.<suffix>``); ``{name}`` fields come from the
error's details.
"""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    "arguments_not_object": (
        "The arguments must be an object with `questions` (got {received}).",
        "参数必须是包含 `questions` 的对象（实际为 {received}）。",
    ),
    "questions_must_be_list": (
        "`questions` must be a list of question objects (got {received}).",
        "`questions` 必须是问题对象数组（实际为 {received}）。",
    ),
    "questions_empty": ("`questions` must not be empty.", "`questions` 不能为空数组。"),
    "questions_too_many": (
        "At most {limit} questions are allowed (got {count}).",
        "最多允许 {limit} 个问题（实际 {count} 个）。",
    ),
    "question_not_object": (
        "Each question must be an object (got {received}).",
        "每个问题必须是对象（实际为 {received}）。",
    ),
    "question_id_blank": (
        "`id` must be a non-blank string.",
        "`id` 必须是非空字符串。",
    ),
    "question_id_duplicate": (
        "Question id {id} is already used by question {first}.",
        "问题 id {id} 与第 {first} 题重复。",
    ),
    "question_text_required": (
        "The question needs a non-empty `question` text.",
        "问题必须提供非空的 `question` 文本。",
    ),
    "input_type_invalid": (
        "`input_type` {value} is not one of: choice, text (or a known alias).",
        "`input_type` {value} 无效，可选：choice、text（或已知别名）。",
    ),
    "options_required": (
        "A choice question needs a non-empty `options` list.",
        "choice 题必须提供非空的 `options` 数组。",
    ),
    "options_not_allowed": (
        "A text question must not have `options`.",
        "text 题不能有 `options`。",
    ),
    "options_too_many": (
        "At most {limit} options are allowed (got {count}).",
        "最多允许 {limit} 个选项（实际 {count} 个）。",
    ),
    "text_too_long": (
        "This text is {length} characters long; the limit is {limit}.",
        "该文本长度为 {length} 个字符，上限为 {limit}。",
    ),
    "option_invalid": (
        "Each option must be a non-empty string or a {{label, value}} object.",
        "每个选项必须是非空字符串或 {{label, value}} 对象。",
    ),
    "option_value_duplicate": (
        "Option value {value} is already used by option {first}.",
        "选项值 {value} 与第 {first} 个选项重复。",
    ),
    "flag_invalid": (
        "`{name}` must be true or false (got {received}).",
        "`{name}` 必须是 true 或 false（实际为 {received}）。",
    ),
    "text_field_invalid": (
        "`{name}` must be a string (got {received}).",
        "`{name}` 必须是字符串（实际为 {received}）。",
    ),
    "default_invalid": (
        "`default` must be {expected} (got {received}).",
        "`default` 必须是{expected}（实际为 {received}）。",
    ),
    "default_not_in_options": (
        "`default` {value} is not one of the option values: {allowed}.",
        "`default` {value} 不在选项值中：{allowed}。",
    ),
    "answer.answers_invalid": (
        "`answers` must be an object mapping question ids to values (got {received}).",
        "`answers` 必须是以问题 id 为键的对象（实际为 {received}）。",
    ),
    "answer.unknown_question": (
        "There is no question with id {id}.",
        "不存在 id 为 {id} 的问题。",
    ),
    "answer.required": ("This question needs an answer.", "此题必须回答。"),
    "answer.wrong_type": (
        "The answer must be {expected} (got {received}).",
        "答案必须是{expected}（实际为 {received}）。",
    ),
    "answer.not_an_option": (
        "{value} is not one of the options: {allowed}.",
        "{value} 不是可选项：{allowed}。",
    ),
    "answer.too_long": (
        "The answer is {length} characters long; the limit is {limit}.",
        "答案长度为 {length} 个字符，上限为 {limit}。",
    ),
}

EXPECTED = {
    "option": ("an option value (string)", "选项值（字符串）"),
    "options": ("a list of option values", "选项值数组"),
    "string": ("a string", "字符串"),
}

"""The system-prompt text that teaches a model the questionnaire protocol.

Kept next to the protocol code so the prompt and the validator change together; the
examples below are checked by the tests to pass self-check.
"""

from __future__ import annotations

from .catalogs import is_zh

_EN = """\
# Asking the user structured questions

When you need the user to choose between options or fill in a short answer, ask with
a questionnaire instead of a free-text question. The chat renders it as a form; the
user's answer comes back in the next user message as
<questionnaire-response>{json}</questionnaire-response>: each answer's `answer` is the
chosen option's value (a list, in option order, for multi_choice; the typed text for
free_text and "Other"), and `label` / `labels` is what the user saw.

## Preferred: a fenced YAML questionnaire inside your reply

Write at least one sentence of ordinary text first (a questionnaire can never be the
whole reply), then a fenced block whose info string is exactly `questionnaire`:

Before I start, I need two decisions from you.

```questionnaire
title: Project setup
questions:
  - type: single_choice
    text: Which database should I use?
    options:
      - PostgreSQL
      - SQLite
    default: PostgreSQL
    allow_other: true
  - type: multi_choice
    text: Which extras do you want?
    options:
      - Docker
      - CI
    default: []
  - type: free_text
    text: Anything else I should know?
    default: ""
```

Rules (a block that breaks one is shown as an error, not as a form):
- Open with a line of three or more backticks followed by `questionnaire` and nothing
  else; close with a line of at least as many backticks. No other code fences inside.
- The body is block YAML, never JSON or `{...}` flow style.
- Top level: exactly `title` (non-empty text) and `questions` (non-empty list). No `id`
  or other keys.
- Every question has `type`, a non-empty `text` and `default`, and nothing else except
  `options` and `allow_other`.
- `type` is exactly `single_choice`, `multi_choice` or `free_text` (no aliases).
- Choice questions: `options` is a list of plain strings (not {value, label}
  objects); single_choice `default` is one of the options; multi_choice `default` is a
  list of options (may be `[]`); `allow_other: true|false` is optional and adds an
  "Other" choice with a text box.
- free_text: `default` is a string (write `""` for empty); no `options`, no
  `allow_other`.
- Quote strings that YAML could misread (`"yes"`, `"no"`, `"3.0"`, text with `: ` or `#`).

## XML+JSON (also accepted)

<questionnaire>{"title":"Next step","questions":[{"id":"next","type":"single_choice",\
"text":"How should I continue?","options":["Continue","Adjust"],"default":"Continue"}]}\
</questionnaire>

Opening and closing tag names must match, with no attributes on the tags; the body is
one JSON object, each key once. Use this form when you need stable question ids.

## The questionnaire_async tool

If the tool `questionnaire_async` is available, you may instead call it with
`{"title": ..., "questions": [...]}` (types `single_choice`, `multi_choice`,
`free_text`; options as strings or {value, label}). It validates the questions and
ends your turn; the user's answers arrive as the next user message. If it returns
errors, fix the arguments and call it again.

## How each answer came to be
Every answer carries `provenance`: `chosen` (the user picked it), `default` (the user
left your default as it was: treat it as a weak answer, not a decision), `free_text`
(typed by the user, including "Other", or an option read from words the user typed in the
chat instead of clicking: `typed_text` keeps them), `skipped` (the user chose not to answer this
question: don't ask it again right away), `amended` (the user changed an earlier answer).
`"status": "declined"` means the user would rather not answer the whole questionnaire:
go on without it and don't ask the same again. A changed answer carries
`"amends": <id of the earlier answer message>` and `"version"`: the latest version
replaces the earlier one; redo whatever depended on it. Structured answers
(`structured_answer`) and form results carry the same `provenance` words.

## Don'ts
- Don't ask the same thing twice, as prose and as a questionnaire. When the user writes
  about something else while your question waits, answer what they wrote: the chat shows
  your waiting question again below your reply, so don't ask it again.
- Only code (```yaml, indented or `inline`) shows an example without activating it.
- Don't invent answers; wait for the user's response.
"""

_ZH = """\
# 用问卷向用户提问

需要用户在几个选项中选择或填写简短答案时，请使用问卷，而不是纯文字提问。
聊天界面会把问卷渲染成表单；用户的回答会出现在下一条 user 消息中，格式为
<questionnaire-response>{json}</questionnaire-response>：每个回答的 `answer` 是所选选项的
value（多选为按选项顺序排列的数组；文本题和“其他”为用户输入的文字），`label` / `labels`
是用户看到的文字。

## 推荐：在回复中写 fenced YAML 问卷

先写至少一句普通说明文字（问卷不能是整条回复的唯一内容），再写 info 字符串恰好为
`questionnaire` 的围栏块：

开始之前，我需要你做两个决定。

```questionnaire
title: 项目设置
questions:
  - type: single_choice
    text: 使用哪个数据库？
    options:
      - PostgreSQL
      - SQLite
    default: PostgreSQL
    allow_other: true
  - type: multi_choice
    text: 需要哪些附加项？
    options:
      - Docker
      - CI
    default: []
  - type: free_text
    text: 还有什么需要我注意的吗？
    default: ""
```

规则（违反任一条的问卷会显示为错误，而不是表单）：
- 开始行是三个或更多反引号加 `questionnaire`，不能有其他内容；结束行的反引号不少于开始行。
  问卷内部不能再有代码围栏。
- 内容必须是块状 YAML，不能是 JSON 或 `{...}` 流式写法。
- 顶层只能有 `title`（非空文字）和 `questions`（非空数组），不能有 `id` 等其他字段。
- 每个问题必须有 `type`、非空的 `text` 和 `default`，此外只允许 `options` 和 `allow_other`。
- `type` 只能是 `single_choice`、`multi_choice` 或 `free_text`（不接受别名）。
- 选择题的 `options` 是普通字符串数组（不是 {value, label} 对象）；单选 `default` 必须等于
  某个选项；多选 `default` 是选项组成的数组（可以是 `[]`）；`allow_other: true|false` 可选，
  会增加带输入框的“其他”选项。
- free_text 的 `default` 是字符串（空值写 `""`），不能有 `options` 或 `allow_other`。
- 容易被 YAML 误解的字符串请加引号（如 `"yes"`、`"3.0"`、包含 `: ` 或 `#` 的文字）。

## XML+JSON（同样支持）

<questionnaire>{"title":"下一步","questions":[{"id":"next","type":"single_choice",\
"text":"接下来如何处理？","options":["继续","调整"],"default":"继续"}]}</questionnaire>

开始和结束标签名称必须一致，标签不能带属性；内容是一个 JSON 对象，同一对象中每个键只出现
一次。需要稳定的题目 id 时使用这种写法。

## questionnaire_async 工具

如果可以使用 `questionnaire_async` 工具，也可以用 `{"title": ..., "questions": [...]}`
调用它（题型 `single_choice`、`multi_choice`、`free_text`；选项可以是字符串或
{value, label}）。它会校验问题并结束本轮执行；用户的回答会作为下一条 user 消息到达。
如果返回错误，请修正参数后重新调用。

## 每个回答的来源
每个回答都带有 `provenance`：`chosen`（用户自己选的）、`default`（用户保留了你给的默认值：
把它当作较弱的回答，而不是明确的决定）、`free_text`（用户输入的文字，包括“其他”，也包括用户没有点选、而是在聊天里直接输入后被读出的选项：
`typed_text` 保存原话）、
`skipped`（用户选择不回答这一题：不要马上再问）、`amended`（用户修改了之前的回答）。
`"status": "declined"` 表示用户不想回答整份问卷：不依赖它继续，也不要再问同样的问题。
修改后的回答带有 `"amends": <原回答消息的 id>` 和 `"version"`：最新版本取代之前的版本，
请重新处理依赖它的内容。结构化回答（`structured_answer`）和表单结果使用同样的
`provenance` 取值。

## 不要
- 不要把同一个问题既用文字又用问卷问一遍。问题还在等待回答时，如果用户说起别的事，
  就回答用户说的内容：界面会在你的回复下方再次显示这个问题，不要重复提问。
- 只有代码（```yaml、缩进代码或 `行内代码`）中的问卷示例不会被激活。
- 不要替用户编造答案，等待用户回复。
"""

SYSTEM_PROMPT: dict[str, str] = {"en": _EN, "zh-hans": _ZH}


def system_prompt(lang: str = "en") -> str:
    """The protocol system prompt in ``lang`` (Chinese for any ``zh*`` tag)."""
    return SYSTEM_PROMPT["zh-hans" if is_zh(lang) else "en"]

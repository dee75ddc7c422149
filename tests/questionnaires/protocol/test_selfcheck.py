"""``self_check`` (DESIGN §4.13) and the protocol system prompt."""

from __future__ import annotations

from questionnaires.protocol import SYSTEM_PROMPT, self_check, system_prompt

from .conftest import VALID_JSON, VALID_YAML

GOOD_FENCED = f"Please confirm.\n\n```questionnaire\n{VALID_YAML}```\n"
BAD_FENCED = "Please confirm.\n\n```questionnaire\ntitle: T\nquestions: []\n```\n"


def test_valid_fenced_and_xml_pass() -> None:
    assert self_check(GOOD_FENCED).passed
    assert self_check(f"<questionnaire>{VALID_JSON}</questionnaire>").passed
    result = self_check(GOOD_FENCED)
    assert result.inspected == GOOD_FENCED
    assert result.diagnostic is None


def test_invalid_block_gives_issue_and_diagnostic() -> None:
    result = self_check(BAD_FENCED)
    assert not result.passed
    assert [(i.name, i.encoding, i.code, i.path) for i in result.issues] == [
        ("questionnaire", "yaml", "questionnaire.questions.empty", "questions")
    ]
    assert result.failed_names == frozenset({"questionnaire"})
    assert result.diagnostic is not None
    assert "COMPLETE corrected reply" in result.diagnostic
    assert "questionnaire.questions.empty" in result.diagnostic
    assert result.to_dict()["issues"][0]["code"] == "questionnaire.questions.empty"


def test_diagnostic_in_chinese() -> None:
    result = self_check(BAD_FENCED, lang="zh-hans")
    assert result.diagnostic is not None
    assert "完整的回复" in result.diagnostic
    assert "`questions` 不能为空" in result.diagnostic


def test_product_names_are_validated_by_the_same_rules() -> None:
    for name in ("yiii-questionnaire", "movo-questionnaire", "ling-questionnaire"):
        good = f"Intro.\n```{name}\n{VALID_YAML}```\n"
        assert self_check(good).passed, name
        bad = f"Intro.\n```{name}\ntitle: T\n```\n"
        result = self_check(bad)
        assert [i.name for i in result.issues] == [name]
        xml_bad = f"<{name}>{{oops}}</{name}>"
        assert self_check(xml_bad).issues[0].code == "questionnaire.json.syntax"


def test_unknown_names_and_code_are_ignored() -> None:
    assert self_check("```foo-questionnaire\ntitle: [\n```").passed
    assert self_check("Example: `<questionnaire>{bad}</questionnaire>`").passed
    assert self_check("```\n<questionnaire>{bad}</questionnaire>\n```").passed


def test_never_infers_from_question_marks() -> None:
    assert self_check("Do you want A or B? Which one?").passed
    assert self_check("你想继续吗？请选择：1. 继续 2. 调整").passed


def test_inspects_latest_assistant_after_last_user() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": BAD_FENCED},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": GOOD_FENCED},
        {"role": "assistant", "content": "   "},
        {"role": "tool", "content": "{}"},
    ]
    result = self_check(messages)
    assert result.passed
    assert result.inspected == GOOD_FENCED


def test_no_assistant_reply_after_user_passes() -> None:
    result = self_check(
        [{"role": "assistant", "content": BAD_FENCED}, {"role": "user", "content": "x"}]
    )
    assert result.passed
    assert result.inspected is None
    assert self_check("").passed
    assert self_check([]).passed


def test_hidden_diagnostic_does_not_reset_the_turn() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": BAD_FENCED},
        {"role": "user", "content": "[self-check] fix", "hidden": True},
        {"role": "assistant", "content": GOOD_FENCED},
    ]
    assert self_check(messages).inspected == GOOD_FENCED


def test_content_parts_are_joined() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": BAD_FENCED}]},
    ]
    assert not self_check(messages).passed


def test_repair_must_contain_the_failed_name() -> None:
    result = self_check(
        "Sorry, here is my answer without a form.", required_names={"questionnaire"}
    )
    assert not result.passed
    assert [(i.name, i.code) for i in result.issues] == [
        ("questionnaire", "selfcheck.name_missing")
    ]
    assert result.failed_names == frozenset({"questionnaire"})


def test_repair_may_switch_encoding() -> None:
    repaired = f"Fixed:\n<questionnaire>{VALID_JSON}</questionnaire>"
    assert self_check(repaired, required_names={"questionnaire"}).passed


def test_repair_under_another_name_is_not_enough() -> None:
    repaired = f"Fixed:\n<sage-questionnaire>{VALID_JSON}</sage-questionnaire>"
    result = self_check(repaired, required_names={"questionnaire"})
    assert [i.code for i in result.issues] == ["selfcheck.name_missing"]


def test_system_prompt_examples_pass_self_check() -> None:
    for lang in ("en", "zh-hans"):
        text = SYSTEM_PROMPT[lang]
        assert system_prompt(lang) == text
        result = self_check(text)
        assert result.passed, result.issues
        assert "```questionnaire" in text
        assert "questionnaire_async" in text
    assert system_prompt("zh-CN") == SYSTEM_PROMPT["zh-hans"]


UNCLOSED = [
    "Intro.\n````questionnaire\n" + VALID_YAML + "```\n",  # shorter closer
    "Intro.\n```questionnaire\n" + VALID_YAML + "``` done\n",  # text after the closer
    "Intro.\n```questionnaire\n" + VALID_YAML + "~~~\n",  # tilde closer
    "Intro.\n```questionnaire",  # opener on the last line
    "Intro.\n```yiii-questionnaire\ntitle: x\n",  # truncated reply, product name
]


def test_unclosed_questionnaire_fence_renders_as_code_but_fails_self_check() -> None:
    from questionnaires.protocol import parse_message

    for reply in UNCLOSED:
        assert [s.kind for s in parse_message(reply, message_id="m")] == ["markdown"]
        result = self_check(reply)
        assert not result.passed, reply
        assert [i.code for i in result.issues] == ["questionnaire.fence.unclosed"]


def test_the_diagnostic_lists_a_bounded_number_of_issues() -> None:
    options = "".join(f"      - {i}\n" for i in range(100))  # numbers: 100 option errors
    question = f"  - type: single_choice\n    text: Q\n    options:\n{options}    default: x\n"
    reply = "Intro.\n\n```questionnaire\ntitle: T\nquestions:\n" + question * 5 + "```\n"
    for lang, more in (("en", "and 450 more"), ("zh-hans", "另有 450 个")):
        result = self_check(reply, lang=lang)
        assert len(result.issues) == 500  # every issue is kept for the lint/admin views
        assert result.diagnostic is not None
        assert result.diagnostic.count("\n- ") == 50
        assert more in result.diagnostic
        assert len(result.diagnostic) < 10_000

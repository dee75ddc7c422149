"""Property tests (hypothesis): invariants that must hold for any input."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from questionnaires.protocol import (
    OTHER_VALUE,
    Option,
    Question,
    Questionnaire,
    ResponseSegment,
    build_response,
    parse_message,
    self_check,
)

from .conftest import VALID_JSON, VALID_YAML

# Fragments that exercise every branch of the scanner, glued together at random.
FRAGMENTS = [
    "```questionnaire\n",
    "```sage-questionnaire\n",
    "````\n",
    "```\n",
    "~~~\n",
    "    ",
    "\t",
    "\n",
    "\r\n",
    "\n\n",
    "`",
    "``",
    "> ",
    "- ",
    "1. ",
    "# ",
    "<questionnaire>",
    "</questionnaire>",
    "<sage-questionnaire>",
    "</sage-questionnaire>",
    "<questionnaire/>",
    "<questionnaire-response>",
    "</questionnaire-response>",
    "&lt;questionnaire&gt;",
    "&lt;/questionnaire&gt;",
    "{",
    "}",
    VALID_YAML,
    VALID_JSON,
    "title: x\n",
    "questions:\n",
    "  - type: free_text\n",
    "Intro text. ",
    "你好？",
    "*a: &b",
]
messages = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=40).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(content=messages, role=st.sampled_from(["assistant", "user"]))
def test_segments_round_trip(content: str, role: str) -> None:
    segments = parse_message(content, message_id="m", role=role)
    assert "".join(s.raw for s in segments) == content
    position = 0
    for segment in segments:
        assert segment.start == position
        assert segment.end == position + len(segment.raw)
        position = segment.end
        segment.to_dict()
    kinds = [s.kind for s in segments]
    assert all(not (a == b == "markdown") for a, b in zip(kinds, kinds[1:], strict=False))


@settings(max_examples=200, deadline=None)
@given(content=messages, message_id=st.one_of(st.integers(), st.text(max_size=8)))
def test_ids_are_stable(content: str, message_id: int | str) -> None:
    first = [s.to_dict() for s in parse_message(content, message_id=message_id)]
    second = [s.to_dict() for s in parse_message(content, message_id=message_id)]
    assert first == second
    ordinals = [
        s.questionnaire_id
        for s in parse_message(content, message_id=message_id)
        if s.kind == "questionnaire"
    ]
    for qid in ordinals:
        assert qid.startswith(f"{message_id}_q")


@settings(max_examples=200, deadline=None)
@given(content=messages)
def test_self_check_never_raises(content: str) -> None:
    result = self_check(content)
    assert result.passed == (not result.issues)
    self_check([{"role": "user", "content": "hi"}, {"role": "assistant", "content": content}])


texts = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != "")


@st.composite
def answered(draw: st.DrawFn) -> tuple[Questionnaire, dict[str, object], dict[str, str]]:
    values = draw(st.lists(texts, min_size=1, max_size=4, unique=True))
    options = tuple(Option(v, f"«{v}»") for v in values)
    questions = (
        Question("q1", "single_choice", draw(texts), options, values[0], allow_other=True),
        Question("q2", "multi_choice", draw(texts), options, (), allow_other=True),
        Question("q3", "free_text", draw(texts), (), ""),
    )
    name = draw(st.sampled_from(["questionnaire", "sage-questionnaire"]))
    questionnaire = Questionnaire(name, "m_q1", draw(texts), questions)
    single = draw(st.sampled_from([*values, OTHER_VALUE]))
    multi = draw(st.lists(st.sampled_from([*values, OTHER_VALUE]), unique=True))
    other = {"q1": draw(texts), "q2": draw(texts)}
    return questionnaire, {"q1": single, "q2": multi, "q3": draw(st.text(max_size=30))}, other


@settings(max_examples=200, deadline=None)
@given(data=answered())
def test_build_response_round_trip(
    data: tuple[Questionnaire, dict[str, object], dict[str, str]],
) -> None:
    questionnaire, answers, other = data
    built = build_response(questionnaire, answers, other_text=other)  # type: ignore[arg-type]
    segments = parse_message(built.envelope, message_id="u", role="user")
    assert len(segments) == 1
    assert isinstance(segments[0], ResponseSegment)
    assert segments[0].payload == built.payload
    got = {
        a["question_id"]: a.get("values", a.get("value", a["answer"]))
        for a in built.payload["answers"]
    }
    assert got["q1"] == answers["q1"]
    assert set(got["q2"]) == set(answers["q2"])  # type: ignore[arg-type]
    assert got["q3"] == answers["q3"].strip()  # type: ignore[union-attr]
    # The envelope carries values (multiple choice in the order the options are listed,
    # "Other" as its typed text); the readable text carries the labels.
    first, second, _ = built.payload["answers"]
    order = [o.value for o in questionnaire.questions[1].options] + [OTHER_VALUE]
    assert got["q2"] == sorted(got["q2"], key=order.index)
    typed = [other["q2"].strip()] if OTHER_VALUE in got["q2"] else []
    assert second["answer"] == [v for v in got["q2"] if v != OTHER_VALUE] + typed
    if answers["q1"] != OTHER_VALUE:
        assert first["answer"] == answers["q1"] and first["label"] == f"«{answers['q1']}»"
        assert f": {first['label']}" in built.display

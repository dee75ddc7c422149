"""The runtime's own messages: the pause questionnaire and the loop-recovery questionnaire.

They are message *content* in the conversation's language (the model reads them back
next run), not UI strings, so both languages live here next to each other — the Chinese
pause text is quoted verbatim from spec 000.
"""

from __future__ import annotations

import json


def is_zh(lang: str) -> bool:
    return lang.lower().startswith("zh")


def continue_label(lang: str) -> str:
    return "继续" if is_zh(lang) else "Continue"


def pause_notice(*, lang: str, limit: int) -> str:
    """Spec 000's paused-task message: a notice plus a fenced questionnaire."""
    if is_zh(lang):
        lead = f"已达到本轮最大循环次数（{limit}），任务已暂停。"
        title, question = "任务已暂停", "是否继续当前任务？"
    else:
        lead = f"This task reached its limit of {limit} steps for one turn, so it is paused."
        title, question = "Task paused", "Continue the current task?"
    option = continue_label(lang)
    return (
        f"{lead}\n\n```questionnaire\ntitle: {title}\nquestions:\n"
        f"  - type: single_choice\n    text: {question}\n    options:\n"
        f"      - {option}\n    default: {option}\n```\n"
    )


LOOP_QUESTION_ID = "loop_recovery_action"


def loop_recovery_notice(*, lang: str) -> str:
    """The XML+JSON recovery questionnaire (stable question id, localized text)."""
    if is_zh(lang):
        lead = "我在重复执行相同的操作，为避免继续空转，本轮已停止。"
        title, text = "执行路径正在重复", "请说明你希望我接下来如何处理"
    else:
        lead = "I kept repeating the same action, so I stopped this turn to avoid looping."
        title, text = "The execution path is repeating", "Tell me how you want me to proceed"
    payload = {
        "title": title,
        "questions": [{"id": LOOP_QUESTION_ID, "type": "free_text", "text": text, "default": ""}],
    }
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return f"{lead}\n\n<questionnaire>{body}</questionnaire>\n"

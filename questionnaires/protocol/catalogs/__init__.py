"""The protocol's messages: one catalog per language, ``en.py`` and ``zh_hans.py``.

Every human message of the pure protocol package — the errors of fenced YAML, XML+JSON,
``questionnaire_async``, ``interactive_form_question``, MCP elicitation fields and spec
004's asks and knowledge references, and the few texts that are not errors — comes from
these two dicts, without Django (the chat's own interface texts are Django's
``locale/*/django.po``).  A catalog maps a *key* to a ``str.format`` template whose
fields are filled from an error's details.

Keys are the error codes themselves (``questionnaire.title.required``,
``interactive_form.options_required``, ``ask.options_too_few``,
``elicitation.required``), with one shorthand: ``*`` stands for one segment of a code,
so a family shares one wording — ``*.tag.mismatch`` serves ``questionnaire.tag.mismatch``
and ``response.tag.mismatch``, ``questionnaire.*.questions_empty`` serves
``questionnaire.start.questions_empty`` and ``questionnaire.json.questions_empty``.  An
exact key wins over ``*.rest``, which wins over ``first.*.rest``.  ``text.*`` keys are
texts that are not errors; ``detail.<words>`` translate English words a validator puts
into ``details``.  Both catalogs have the same keys and the same fields in every
template (``tests/questionnaires/protocol/test_catalogs.py``).

A language tag starting with ``zh`` (``zh``, ``zh-hans``, ``zh-CN``…) reads the Chinese
catalog; every other tag the English one.
"""

from __future__ import annotations

from . import en, zh_hans

CATALOGS: dict[str, dict[str, str]] = {"en": en.MESSAGES, "zh-hans": zh_hans.MESSAGES}


def is_zh(lang: str) -> bool:
    """True for any Chinese language tag (``zh``, ``zh-hans``, ``zh-CN`` …)."""
    return lang.lower().startswith("zh")


def catalog(lang: str) -> dict[str, str]:
    return CATALOGS["zh-hans" if is_zh(lang) else "en"]


def entry(code: str, lang: str = "en") -> str | None:
    """The catalog key that serves ``code`` (``*`` shorthand resolved), or None."""
    messages = catalog(lang)
    if code in messages:
        return code
    head, _, rest = code.partition(".")
    for key in (f"*.{rest}", f"{head}.*.{rest.partition('.')[2]}" if "." in rest else ""):
        if key in messages:
            return key
    return None


def template(code: str, lang: str) -> str | None:
    """The template for ``code`` in ``lang``, or None."""
    key = entry(code, lang)
    return None if key is None else catalog(lang)[key]


class _Fill(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def text(key: str, lang: str, /, **fields: str) -> str:
    """``key``'s template in ``lang`` with ``fields`` filled in (a missing field shows
    ``?``; an unknown key is returned as it is, so a message is never empty)."""
    found = template(key, lang)
    return key if found is None else found.format_map(_Fill(fields))

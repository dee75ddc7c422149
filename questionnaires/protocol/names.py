"""The names registry (DESIGN §4.1).

Two request names render as interactive cards; self-check validates five.  A response
tag is the request name plus ``-response``.  Anything else is not protocol.
"""

from __future__ import annotations

RENDERED_NAMES: frozenset[str] = frozenset({"questionnaire", "sage-questionnaire"})
SELF_CHECK_NAMES: frozenset[str] = frozenset(
    {
        "questionnaire",
        "yiii-questionnaire",
        "movo-questionnaire",
        "ling-questionnaire",
        "sage-questionnaire",
    }
)
RESPONSE_SUFFIX = "-response"
OTHER_VALUE = "__questionnaire_other__"


def response_tag(name: str) -> str:
    """``questionnaire`` → ``questionnaire-response``."""
    return name + RESPONSE_SUFFIX


def response_names(names: frozenset[str]) -> frozenset[str]:
    """The response tag names that belong to ``names``."""
    return frozenset(response_tag(n) for n in names)


def envelope_type(name: str) -> str:
    """The ``type`` field of a response payload for a request name."""
    return (
        "sage_questionnaire_response" if name == "sage-questionnaire" else "questionnaire_response"
    )


RESPONSE_TYPES: frozenset[str] = frozenset(
    {"questionnaire_response", "sage_questionnaire_response"}
)

"""Caps that bound the work and the output of every validator (fenced YAML, XML+JSON,
``questionnaire_async``, ``interactive_form_question``).

Each cap is far above anything a real questionnaire needs (a person answers a handful
of questions with a handful of options each) and low enough that a hostile block costs
little: with the caps checked *before* anything is looked at item by item, a block is
at most 50 questions × 100 options, every check is one pass with dict/set look-ups,
and no error message grows with the input.  A block over a cap is an *invalid*
segment (raw text kept), never an exception.  ``README.md`` lists the codes.
"""

from __future__ import annotations

MAX_QUESTIONS = 50
"""Questions per questionnaire (also the ``interactive_form_question`` cap)."""

MAX_OPTIONS = 100
"""Options per choice question; also items in a multi-choice ``default`` list."""

MAX_TEXT_CHARS = 2000
"""Characters in a title, a question's text, a free-text default or a placeholder."""

MAX_OPTION_CHARS = 500
"""Characters in an option's value or label."""

MAX_ID_CHARS = 200
"""Characters in an explicit question id (ids end up in HTML ids and form names)."""

MAX_BODY_BYTES = 64 * 1024
"""Bytes of one fenced YAML or XML+JSON body (UTF-8)."""

MAX_DEPTH = 32
"""Nesting of JSON arrays/objects or YAML collections in one block.  A questionnaire
needs 5 levels (root, questions, question, options, option); a response 4."""

SHOWN_ITEMS = 10
"""List items quoted in one error *message* (``details`` keep the whole list)."""

SHOWN_CHARS = 120
"""Characters of one value quoted in an error message."""

MAX_BLOCKS = 20
"""Protocol blocks per message.  Past it, the rest of the message is one invalid
segment (``questionnaire.blocks.too_many`` / ``response.blocks.too_many``): each block
costs a card to render and cuts the Markdown into another segment."""

"""A fifth way of asking, registered from the test tree (tests/questionnaires/test_registry.py):
the proof that a kind is one package plus one line in `settings.QUESTIONNAIRE_KINDS` — no file
outside this package names it.

A toy card asks one free-text question; while it is open it holds the conversation (other
input is refused with 409 `pending_toy`); its answer is the next user message. It keeps no
rows of its own: its messages carry `metadata["kind"] = "toy"`.
"""

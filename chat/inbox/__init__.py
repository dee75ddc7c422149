"""The person's inbox of waiting questions, and the notifications that bring them to it.

Built on the durable waits (`chat.core.waits`) and the kind registry's hooks (`locate`,
`pending`, `resolve`): nothing here names a kind. See docs/inbox.md.
"""

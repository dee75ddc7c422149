"""A sixth agent, registered from the test tree only (tests/core/test_agents.py): it proves
that an agent is one value and one line in settings.CHAT_AGENTS, with no line of the
product changed."""

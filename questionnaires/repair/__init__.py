"""Conversation repair around a waiting question (issue 36, docs/repair.md)."""

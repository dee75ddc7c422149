"""The sidebar's search (chat.core.selectors.conversation_search_for_user): titles and
message text, on both databases — full-text search on PostgreSQL, substrings on SQLite."""

from __future__ import annotations

import pytest
from django.db import connection

from chat.core.selectors import conversation_search_for_user
from chat.core.services import conversation_create, message_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def chats(user, other_user):
    oslo = conversation_create(owner=user, title="Weekend trip", agent="echo")
    message_create(conversation=oslo, role="user", content="Plan a weekend in Oslo with the kids")
    knee = conversation_create(owner=user, title="Knee consultation", agent="echo")
    message_create(conversation=knee, role="assistant", content="Which knee hurts?")
    hidden = conversation_create(owner=user, title="Diagnostics", agent="echo")
    message_create(conversation=hidden, role="assistant", content="secret oslo", hidden=True)
    theirs = conversation_create(owner=other_user, title="Oslo too", agent="echo")
    message_create(conversation=theirs, role="user", content="Oslo")
    return {"oslo": oslo, "knee": knee, "hidden": hidden, "theirs": theirs}


def _found(user, query):
    return [c.title for c in conversation_search_for_user(user=user, query=query)]


def test_message_text_is_searched_not_just_titles(user, chats):
    assert _found(user, "oslo") == ["Weekend trip"]  # not the hidden message, not bob's
    assert _found(user, "Oslo kids") == ["Weekend trip"]  # every word, in any order


def test_titles_are_searched_by_substring(user, chats):
    assert _found(user, "consult") == ["Knee consultation"]


def test_words_match_as_you_type(user, chats):
    assert _found(user, "wee") == ["Weekend trip"]
    assert _found(user, "hurt") == ["Knee consultation"]


def test_no_match_and_empty_queries(user, chats):
    assert _found(user, "zanzibar") == []
    assert len(_found(user, "   ")) == 3  # everything of hers
    assert _found(user, "&|!:*()'") == []  # tsquery syntax is never passed through


def test_on_postgresql_message_text_uses_full_text_search(postgres_only, user, chats):
    assert connection.vendor == "postgresql"
    sql = str(conversation_search_for_user(user=user, query="oslo").query)
    assert "to_tsvector" in sql and "to_tsquery" in sql
    with connection.cursor() as cursor:  # the chat/0011 index for that very expression
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'msg_content_fts_simple'")
        assert cursor.fetchone() is not None

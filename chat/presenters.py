"""View models for templates: everything a page needs, computed once, no queries in templates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Max
from django.utils.safestring import SafeString

from chat import selectors
from chat.models import Conversation, Message
from chat.rendering import markdown_to_html
from chat.structured.presenters import state_panel_for, with_asks


@dataclass(frozen=True)
class MessageItem:
    message: Message
    html: SafeString
    ask: Any = None  # an ask_user_options widget (chat.structured.presenters.AskView)

    @property
    def role(self) -> str:
        return self.message.role


def message_item(message: Message) -> MessageItem:
    return MessageItem(message=message, html=markdown_to_html(message.shown_content))


def message_items(*, conversation: Conversation, after_seq: int = 0) -> list[MessageItem]:
    messages = list(selectors.message_list_visible(conversation=conversation, after_seq=after_seq))
    items = [message_item(m) for m in messages]
    return with_asks(conversation=conversation, messages=messages, items=items)


def conversation_context(*, conversation: Conversation, form: Any) -> dict[str, Any]:
    items = message_items(conversation=conversation)
    last_event_id = conversation.events.aggregate(m=Max("id"))["m"] or 0
    return {
        "conversation": conversation,
        "items": items,
        "form": form,
        "last_seq": items[-1].message.seq if items else 0,
        "last_event_id": last_event_id,
        "panel": state_panel_for(conversation=conversation),
    }

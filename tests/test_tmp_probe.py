import re
import pytest
from chat.core.services import conversation_create
from chat.usecases import message_post_user

pytestmark = pytest.mark.django_db

def test_probe(user, client_in):
    c = conversation_create(owner=user, title="Trip", agent="scripted")
    c.state = {"script": "forms"}; c.save(update_fields=["state"])
    message_post_user(conversation=c, content="Plan a trip for me")
    html = client_in.get(f"/conversations/{c.pk}/").content.decode()
    print(re.findall(r'<section[^>]*class="[^"]*iform[^"]*"', html))
    print(re.findall(r'class="iform-pending"', html))
    from chat.core.models import Message
    for m in Message.objects.filter(conversation=c).order_by("seq"):
        print(m.role, m.hidden, repr(m.content[:200]), m.metadata.get("kind"))

"""The one card: what every way of asking shows the same way (pure: no Django, no database).

Each kind's card view model has a `chrome` property returning a `CardChrome`; the shared
frame `templates/questionnaires/cards/_card.html` reads it, and the kind's template fills
the frame's blocks (fields, footer actions). Below the registry, in the pure layer, so the
inline kind's database-free presenter may build one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CardState = Literal["open", "waiting", "answered", "closed", "refused", "preview"]


@dataclass(frozen=True)
class CardChrome:
    """What every card shows the same way, whatever its kind (`card.chrome`, read by the
    shared frame `templates/questionnaires/cards/_card.html`): its title, who asks (a source
    chip such as "demo · MCP", where it matters), its state and the chip that names it.

    States: `open` (answerable: the form and its footer), `waiting` (shown, not answerable
    yet: a pending tool result, the next question of an intake), `answered` and `closed`
    (folded to the title and a chip, expandable to the full card with the choices marked),
    `refused` (a refused answer shown again with what was chosen), `preview` (playground).
    `summary` is the answer on the folded card, only for kinds whose answer has no user turn
    of its own (an MCP server's question): elsewhere the user's turn shows it, once."""

    dom_id: str
    title: str
    state: CardState
    chip: str = ""
    source: str = ""
    summary: str = ""
    skipped: bool = False  # answered by skipping it: a quiet chip, no check mark
    notice: str = ""  # a refusal or "already answered": shown outside the fold, as an alert
    unfolded: bool = False  # folded, but shown open: the person was working in it

    @property
    def interactive(self) -> bool:
        return self.state == "open"

    @property
    def folded(self) -> bool:
        return self.state in ("answered", "closed")

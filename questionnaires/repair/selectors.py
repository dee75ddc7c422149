"""Reads of conversation repair the kinds need (no import of the kinds: they import it)."""

from __future__ import annotations

from chat.core.models import Wait, WaitStatus
from questionnaires.repair.models import Repair, RepairOutcome


def carried(*, conversation_id: int, ref: str) -> bool:
    """Whether the question `ref` still waits after the person digressed: repair kept its
    wait open and shows it again below the reply, so it stays answerable although it is
    no longer the latest (issue 36)."""
    return (
        Wait.objects.filter(ref=ref, status=WaitStatus.OPEN).exists()
        and Repair.objects.filter(
            conversation_id=conversation_id, wait_ref=ref, outcome=RepairOutcome.DIGRESSION
        ).exists()
    )


def carried_refs(*, conversation_id: int, kind: str) -> list[str]:
    """The refs of `kind` whose questions are carried (see `carried`)."""
    refs = Wait.objects.filter(
        conversation_id=conversation_id, kind=kind, status=WaitStatus.OPEN
    ).values_list("ref", flat=True)
    kept = Repair.objects.filter(
        conversation_id=conversation_id,
        wait_ref__in=list(refs),
        outcome=RepairOutcome.DIGRESSION,
    ).values_list("wait_ref", flat=True)
    return sorted(set(kept))

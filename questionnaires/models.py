"""The asking app's models, defined in their kinds (Django loads them from here)."""

from __future__ import annotations

from questionnaires.analytics.models import (
    AnalyticsCursor,
    CardDefinition,
    CardInstance,
    DefinitionQuestion,
)
from questionnaires.asks.models import StructuredAnswer
from questionnaires.drafts import CardDraft
from questionnaires.elicitations.models import Elicitation, ElicitationStatus
from questionnaires.forms.models import FormStatus, InteractiveForm
from questionnaires.inline.models import Submission
from questionnaires.repair.models import Repair, RepairOutcome

__all__ = [
    "AnalyticsCursor",
    "CardDefinition",
    "CardInstance",
    "DefinitionQuestion",
    "CardDraft",
    "Elicitation",
    "ElicitationStatus",
    "FormStatus",
    "InteractiveForm",
    "Repair",
    "RepairOutcome",
    "StructuredAnswer",
    "Submission",
]

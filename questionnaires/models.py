"""The asking app's models, defined in their kinds (Django loads them from here)."""

from __future__ import annotations

from questionnaires.asks.models import StructuredAnswer
from questionnaires.drafts import CardDraft
from questionnaires.forms.models import FormStatus, InteractiveForm
from questionnaires.inline.models import Submission

__all__ = ["CardDraft", "FormStatus", "InteractiveForm", "StructuredAnswer", "Submission"]

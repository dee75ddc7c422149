"""The deferred form kind's analytics (questionnaires.analytics.outcomes): one card per
`InteractiveForm` row (its own table and cursor).

| answered | skipped | declined | expired | abandoned |
| --- | --- | --- | --- | --- |
| `answered` | — | `cancelled` by the person | wait expired | its wait ended (Stop, run ended) |
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from questionnaires.analytics.fingerprint import DefinitionSpec, QuestionSpec
from questionnaires.analytics.models import Outcome
from questionnaires.analytics.outcomes import (
    ANSWERED,
    OTHER,
    SKIPPED,
    Batch,
    Observation,
    Source,
    empty,
    repairs_of_messages,
    settle_unanswered,
    waits_of,
)
from questionnaires.forms.models import KIND_NAME, FormStatus, InteractiveForm, form_questions


def _spec(form: InteractiveForm) -> DefinitionSpec:
    questions = tuple(
        QuestionSpec(
            id=q["id"],
            text=q["question"],
            type=f"{q['input_type']}{'_multi' if q.get('multi_select') else ''}",
            options=tuple((o["value"], o["label"]) for o in q.get("options") or ()),
        )
        for q in form_questions(form.render_payload)
    )
    label = questions[0].text if questions else ""
    return DefinitionSpec(kind=KIND_NAME, title="", questions=questions, label=label)


def _questions(spec: DefinitionSpec, answers: Mapping[str, object]) -> dict[str, str]:
    result: dict[str, str] = {}
    for q in spec.questions:
        value = answers.get(q.id)
        values = value if isinstance(value, list) else [value]
        if empty(value):
            result[q.id] = SKIPPED
        elif q.options and any(v not in {o[0] for o in q.options} for v in values):
            result[q.id] = OTHER
        else:
            result[q.id] = ANSWERED
    return result


def forms_observe(forms: Sequence[InteractiveForm]) -> list[Observation]:
    waits = waits_of(f"{KIND_NAME}:{f.pk}" for f in forms)
    observations: list[Observation] = []
    for form in forms:
        spec = _spec(form)
        obs = Observation(
            f"{KIND_NAME}:{form.pk}",
            KIND_NAME,
            form.conversation_id,
            form.message_id,
            spec,
            form.created_at,
        )
        observations.append(obs)
        if form.status == FormStatus.ANSWERED:
            obs.outcome, obs.settled_at = Outcome.ANSWERED, form.answered_at or form.created_at
            answer = form.answer if isinstance(form.answer, Mapping) else {}
            given = answer.get("answers")
            obs.questions = _questions(spec, given if isinstance(given, Mapping) else {})
        elif form.status == FormStatus.CANCELLED:  # the person cancelled the form
            obs.outcome, obs.settled_at = Outcome.DECLINED, form.answered_at or form.created_at
        else:
            settle_unanswered(obs, waits.get(obs.ref), None)
    repairs = repairs_of_messages(f.message_id for f in forms)
    for obs in observations:
        obs.repairs = repairs.get(obs.message_id or 0, 0)
    return observations


def forms_after(after: int, limit: int) -> Batch:
    forms = list(InteractiveForm.objects.filter(id__gt=after).order_by("id")[:limit])
    return Batch(forms_observe(forms), [(f.pk, f.created_at) for f in forms])


def forms_by_id(ids: Collection[int]) -> list[Observation]:
    return forms_observe(list(InteractiveForm.objects.filter(id__in=list(ids))))


def forms_pending(ids: Collection[int]) -> set[int]:
    pending = InteractiveForm.objects.filter(id__in=list(ids), status=FormStatus.PENDING)
    return set(pending.values_list("id", flat=True))


SOURCE = Source(after=forms_after, by_id=forms_by_id, pending=forms_pending)

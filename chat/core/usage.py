"""Model token usage: recorded per run, model and day; priced; a per-user daily budget.

`usage_record` adds one model call to its run's row (`ModelUsage`); `budget_problem`
tells whether a person may start a new turn of a model-calling agent today
(`DAILY_TOKEN_BUDGET`, 0 = no budget). A turn already running is never cut off: the
budget is checked when a turn is asked for, so one turn may end past it.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from chat.core.agents import model_agent_names
from chat.core.errors import ChatError
from chat.core.models import Conversation, ModelUsage

MILLION = Decimal(1_000_000)


def usage_day(now: datetime | None = None) -> date:
    return (now or timezone.now()).astimezone(UTC).date()


def usage_cost(model: str, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
    prices = settings.MODEL_COSTS.get(model)
    if prices is None:
        return None
    return (prompt_tokens * prices[0] + completion_tokens * prices[1]) / MILLION


def usage_record(
    *,
    user_id: int,
    conversation_id: int | None,
    run_id: int,
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
    estimated: bool,
) -> None:
    """Add one model call to the run's row for this model and day (created on first use)."""
    model = model[:200] or "unknown"
    day = usage_day()
    cost = usage_cost(model, prompt_tokens, completion_tokens)
    changes = {
        "calls": F("calls") + 1,
        "prompt_tokens": F("prompt_tokens") + max(prompt_tokens, 0),
        "completion_tokens": F("completion_tokens") + max(completion_tokens, 0),
        "updated_at": timezone.now(),
    }
    if estimated:
        changes["estimated"] = True
    if cost is not None:
        changes["cost"] = Coalesce(F("cost"), Decimal(0)) + cost
    rows = ModelUsage.objects.filter(run_id=run_id, model=model, day=day)
    for _try in range(2):
        with transaction.atomic():
            if rows.update(**changes):
                return
            try:
                with transaction.atomic():
                    ModelUsage.objects.create(
                        user_id=user_id,
                        conversation_id=conversation_id,
                        run_id=run_id,
                        model=model,
                        day=day,
                        calls=1,
                        prompt_tokens=max(prompt_tokens, 0),
                        completion_tokens=max(completion_tokens, 0),
                        estimated=estimated,
                        cost=cost,
                    )
                return
            except IntegrityError:  # another attempt of the run created it meanwhile
                continue


def tokens_today(*, user_id: int) -> int:
    totals = ModelUsage.objects.filter(user_id=user_id, day=usage_day()).aggregate(
        prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens")
    )
    return int(totals["prompt"] or 0) + int(totals["completion"] or 0)


def _seconds_to_midnight(now: datetime) -> int:
    tomorrow = datetime.combine(usage_day(now) + timedelta(days=1), time(), tzinfo=UTC)
    return max(int((tomorrow - now).total_seconds()) + 1, 1)


class TokenBudgetExhausted(ChatError):
    def __init__(self, *, budget: int, used: int, retry_after: int) -> None:
        hours, rest = divmod(retry_after, 3600)
        minutes = max(rest // 60, 1) if not hours else rest // 60
        when = (
            _("in %(h)s h %(m)s min") % {"h": hours, "m": minutes}
            if hours
            else _("in %(m)s min") % {"m": minutes}
        )
        super().__init__(
            "token_budget_exhausted",
            _(
                "You have used today's allowance of %(budget)s model tokens, so the "
                "assistant can't start another answer now. It renews at midnight UTC "
                "(%(when)s). Nothing was sent: what you entered is still here."
            )
            % {"budget": f"{budget:,}", "when": when},
            status=429,
            details={"budget": budget, "used": used, "retry_after": retry_after},
        )


def budget_problem(*, conversation: Conversation) -> TokenBudgetExhausted | None:
    """The refusal a new turn of this conversation gets, or None: only model-calling
    agents count, and only with a DAILY_TOKEN_BUDGET."""
    budget = settings.DAILY_TOKEN_BUDGET
    if budget <= 0 or conversation.agent not in model_agent_names():
        return None
    used = tokens_today(user_id=conversation.owner_id)
    if used < budget:
        return None
    return TokenBudgetExhausted(
        budget=budget, used=used, retry_after=_seconds_to_midnight(timezone.now())
    )

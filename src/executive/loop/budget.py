"""The spend caps, as the loop applies them (the sums are :mod:`executive.workspace.spending`'s).

* ``EXECUTIVE_BUDGET_RUN_USD``: the CLI is told (``--max-budget-usd``); a run that still
  reports more than the cap (the CLI stops only after the turn that passed it, or did not stop)
  fails, whatever its verifiers would have said.
* ``EXECUTIVE_BUDGET_BUNDLE_USD``: a bundle whose runs reached it is blocked before its next
  attempt starts, with its spend per attempt in needs-you.
* ``EXECUTIVE_BUDGET_DAY_USD``: while today's spend has reached it, no bundle with a paid
  (claude) worker is picked; command bundles go on (the hook runner falls back to the built-in
  engine under the same pause).
"""

from __future__ import annotations

from dataclasses import replace

from executive.logs import get_logger
from executive.loop import transitions
from executive.loop.attempt import Attempt
from executive.memory.read import estimate_tokens
from executive.settings import Settings
from executive.spend import usd
from executive.workers import vendors
from executive.workspace.lifecycle import Active
from executive.workspace.spending import Budget, Pause

log = get_logger(__name__)


def over_run_cap(attempt: Attempt, cap: float | None, pack: str | None) -> Attempt:
    """The attempt with its pack's tokens (memory's share of the worker's input); failed when
    the run reported more than ``cap``."""
    if attempt.paid:
        attempt = replace(attempt, pack_tokens=estimate_tokens(pack) if pack else None)
    cost = attempt.spend.cost_usd if attempt.spend is not None else None
    if cap is None or cost is None or cost <= cap:
        return attempt
    why = f"the run cost {usd(cost)}, over its budget of ${cap:g} (EXECUTIVE_BUDGET_RUN_USD)"
    log.warning("budget.run_over", contract_id=attempt.contract_id, cost_usd=cost, cap_usd=cap)
    # Last: the ledger and needs-you keep an error's end.
    error = f"{attempt.error}\n{why}" if attempt.error else why
    return replace(attempt, passed=False, exited_clean=False, error=error)


def bundle_block(budget: Budget, active: Active) -> transitions.Transition | None:
    """Blocking the bundle, when its runs have reached ``EXECUTIVE_BUDGET_BUNDLE_USD``."""
    spent = budget.bundle_over(active.bundle.slug)
    step = active.state.next_step()
    if spent is None or step is None:
        return None
    cap = budget.settings.budget_bundle_usd
    reason = (
        f"spent {usd(spent.spend.cost_usd)} of its ${cap:g} budget (EXECUTIVE_BUDGET_BUNDLE_USD)"
    )
    lines = [
        f"{r.kind} {r.name} ({r.contract_id}): {usd(r.spend.cost_usd if r.spend else None)}"
        for r in budget.spending.bundles.get(active.bundle.slug, [])
    ]
    details = [
        f"{spent.runs} paid runs, {spent.not_reported} not reported; raise or unset "
        "EXECUTIVE_BUDGET_BUNDLE_USD before a retry (the spend stays counted)"
    ]
    log.warning("budget.bundle_blocked", cost_usd=spent.spend.cost_usd, cap_usd=cap)
    block = transitions.Block(reason, details, [("Spend per run", "\n".join(lines))])
    return transitions.goal_blocked(active.bundle, step, step.contract_id, block)


class DayGate:
    """Which bundles may start under the day's budget; logs a pause once when it begins."""

    def __init__(self, budget: Budget, settings: Settings) -> None:
        self.budget = budget
        # The loop's own, not budget.settings: budget_of shares one Budget among settings that
        # agree on the ledger, time zone and caps only, and which worker is paid is none of them.
        self.settings = settings
        self._announced: Pause | None = None

    def startable(self, actives: list[Active]) -> list[Active]:
        pause = self.budget.paused()
        if pause is None:
            self._announced = None
            return actives
        if self._announced is None or self._announced.until != pause.until:
            log.warning("budget.day_paused", **pause.as_dict())
            self._announced = pause
        vendor = self.settings.worker_vendor
        return [a for a in actives if not vendors.paid(a.bundle.vendor(vendor))]

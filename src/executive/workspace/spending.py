"""What the agent spent, summed from the work ledger, and whether the day's budget allows more.

Every paid run leaves its ``spend`` in the ledger: a claude worker's in its ``STEP_COMPLETED``
or ``STEP_FAILED`` record, an LLM-engine hook's in its ``EXECUTIVE_SKILL_USED`` record
(:mod:`executive.spend` says what it holds). :class:`Spending` folds those records into the
day's, each bundle's and each hook's totals, reading only what was appended since it last
looked; nothing is held that the ledger does not say, so a restart keeps the day's total.

A day is midnight to midnight in the operator's time zone (``EXECUTIVE_TIMEZONE``, the one the
daily snapshot keeps). :class:`Budget` answers the caps: the day's (``EXECUTIVE_BUDGET_DAY_USD``:
paused until the next midnight) and the bundle's (``EXECUTIVE_BUDGET_BUNDLE_USD``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from executive.dates import parse_instant
from executive.home import Home
from executive.settings import Settings
from executive.spend import TOKENS, Spend, of_record
from executive.workspace.ledger import LedgerFold, WorkLedger

WORKER_EVENTS = ("STEP_COMPLETED", "STEP_FAILED")
HOOK_EVENT = "EXECUTIVE_SKILL_USED"
KINDS = ("worker", "hook")
PAUSED = "paused: daily budget"
_RUN_FIGURES = ("cost_usd", *TOKENS, "turns")  # a run's, as the ledger recorded them


@dataclass
class Run:
    """One paid run as the ledger recorded it."""

    ts: str
    kind: str  # worker or hook
    name: str  # the bundle's step and attempt (worker), or the hook
    contract_id: str
    spend: Spend | None  # None: not reported
    pack_tokens: int | None = None  # the memory pack's share of the run's input

    def as_dict(self) -> dict[str, Any]:
        return {
            "ts": self.ts,
            "kind": self.kind,
            "name": self.name,
            "contract_id": self.contract_id,
            **{n: getattr(self.spend, n) if self.spend else None for n in _RUN_FIGURES},
            "pack_tokens": self.pack_tokens,
        }


@dataclass
class Tally:
    """A sum of runs: their figures, how many ran, and how many did not report."""

    spend: Spend = field(default_factory=Spend)
    runs: int = 0
    not_reported: int = 0

    def add(self, run: Run) -> None:
        self.runs += 1
        if run.spend is None:
            self.not_reported += 1
        else:
            self.spend = self.spend + run.spend

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.spend.of(["cost_usd"]),
            "runs": self.runs,
            "not_reported": self.not_reported,
            **self.spend.of(TOKENS),
        }


class Spending(LedgerFold):
    """The ledger's paid runs, summed per day (in ``tz``), per bundle, per hook and per kind."""

    def __init__(self, ledger: WorkLedger, tz: ZoneInfo) -> None:
        self.tz = tz
        super().__init__(ledger)

    def reset(self) -> None:
        self.days: dict[date, Tally] = {}
        # Each bundle's runs (``bundle show`` and a blocked bundle's needs-you list them) and
        # their running total (the summary ranks every bundle on each scrape: no re-adding).
        self.bundles: dict[str, list[Run]] = {}
        self.bundle_totals: dict[str, Tally] = {}
        self.hooks: dict[str, Tally] = {}
        self.kinds: dict[str, Tally] = {k: Tally() for k in KINDS}

    def add(self, event: dict[str, Any]) -> None:
        run = _run(event)
        if run is None:
            return
        when = parse_instant(run.ts)
        if when is not None:
            self.days.setdefault(when.astimezone(self.tz).date(), Tally()).add(run)
        self.kinds[run.kind].add(run)
        bundle = event.get("bundle")
        if isinstance(bundle, str) and bundle:
            self.bundles.setdefault(bundle, []).append(run)
            self.bundle_totals.setdefault(bundle, Tally()).add(run)
        if run.kind == "hook":
            self.hooks.setdefault(run.name, Tally()).add(run)

    def day(self, day: date) -> Tally:
        """A day's total over both kinds (a copy: the fold goes on adding to its own)."""
        return replace(self.days.get(day, Tally()))

    def bundle(self, slug: str) -> Tally:
        """A bundle's total (a copy, as :meth:`day`'s)."""
        return replace(self.bundle_totals.get(slug, Tally()))


def _run(event: dict[str, Any]) -> Run | None:
    """The paid run a ledger record tells of, if it tells of one."""
    kind = event.get("event")
    spent = event.get("spend")
    if not isinstance(spent, dict) or kind not in (*WORKER_EVENTS, HOOK_EVENT):
        return None
    ts, contract = str(event.get("ts", "")), str(event.get("contract_id", ""))
    if kind == HOOK_EVENT:
        return Run(ts, "hook", str(event.get("hook", "")), contract, of_record(spent))
    name = f"step {event.get('step')} attempt {event.get('attempts', event.get('attempt'))}"
    pack = spent.get("pack_tokens")
    return Run(
        ts, "worker", name, contract, of_record(spent), pack if isinstance(pack, int) else None
    )


@dataclass(frozen=True)
class Pause:
    """The day's budget is spent: no paid run starts until ``until``."""

    spent: float
    cap: float
    until: datetime  # the next midnight in the operator's time zone

    def as_dict(self) -> dict[str, Any]:
        return {
            "reason": PAUSED,
            "spent_usd": round(self.spent, 6),
            "cap_usd": self.cap,
            "until": self.until.isoformat(),
        }

    def describe(self) -> str:
        return (
            f"{PAUSED} (${self.spent:.4f} of ${self.cap:g} spent today); "
            f"resumes {self.until.isoformat()}"
        )


class Budget:
    """The caps, against what the ledger says was spent. ``now`` is injectable for tests."""

    def __init__(
        self,
        settings: Settings,
        ledger: WorkLedger,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.settings = settings
        self.tz = settings.tz
        self.spending = Spending(ledger, self.tz)
        self._now = now or (lambda: datetime.now(UTC))
        # The dashboard reads from worker threads: one reader of the fold at a time.
        self._lock = threading.RLock()

    def refresh(self) -> Spending:
        with self._lock:
            self.spending.refresh()
        return self.spending

    def today(self) -> date:
        return self._now().astimezone(self.tz).date()

    def paused(self) -> Pause | None:
        """The day's pause, while today's spend has reached ``EXECUTIVE_BUDGET_DAY_USD``."""
        if self.settings.budget_day_usd is None:
            return None
        today = self.today()
        with self._lock:
            return self._pause(today, self.refresh().day(today))

    def _pause(self, today: date, spent: Tally) -> Pause | None:
        cap = self.settings.budget_day_usd
        if cap is None or spent.spend.cost_usd < cap:
            return None
        until = datetime.combine(today + timedelta(days=1), time(0), tzinfo=self.tz)
        return Pause(spent.spend.cost_usd, cap, until)

    def bundle_over(self, slug: str) -> Tally | None:
        """The bundle's spend, when it has reached ``EXECUTIVE_BUDGET_BUNDLE_USD``."""
        cap = self.settings.budget_bundle_usd
        if cap is None:
            return None
        with self._lock:
            spent = self.refresh().bundle(slug)
        return spent if spent.spend.cost_usd >= cap else None

    def summary(self, days: int = 7, top: int = 5) -> dict[str, Any]:
        """Today's spend, the last ``days`` days, the costliest bundles and hooks, the caps."""
        with self._lock:
            return self._summary(days, top)

    def _summary(self, days: int, top: int) -> dict[str, Any]:
        spending = self.refresh()
        today = self.today()
        week = [today - timedelta(days=n) for n in range(days - 1, -1, -1)]
        spent_today = spending.day(today)
        bundles = sorted(spending.bundle_totals.items(), key=lambda item: -item[1].spend.cost_usd)
        hooks = sorted(spending.hooks.items(), key=lambda item: -item[1].spend.cost_usd)
        pause = self._pause(today, spent_today)
        s = self.settings
        return {
            "today": {"date": today.isoformat(), **spent_today.as_dict()},
            "days": [{"date": d.isoformat(), **spending.day(d).as_dict()} for d in week],
            "bundles": [{"bundle": k, **v.as_dict()} for k, v in bundles[:top]],
            "hooks": [{"hook": k, **v.as_dict()} for k, v in hooks[:top]],
            "kinds": {k: v.as_dict() for k, v in spending.kinds.items()},
            "caps": {
                "run_usd": s.budget_run_usd,
                "bundle_usd": s.budget_bundle_usd,
                "day_usd": s.budget_day_usd,
            },
            "timezone": str(self.tz),
            "paused": pause.as_dict() if pause is not None else None,
        }


# One fold per ledger and caps in this process (status, the dashboard, /metrics, /healthz),
# each read on from where it stopped: a scrape never re-reads a ledger of months.
_BUDGETS: dict[tuple[str, str, tuple[float | None, ...]], Budget] = {}


def budget_of(settings: Settings) -> Budget:
    """The process's :class:`Budget` for the home's work ledger under ``settings``."""
    caps = (settings.budget_run_usd, settings.budget_bundle_usd, settings.budget_day_usd)
    path = Home(settings.home).work_ledger
    key = (str(path), settings.timezone, caps)
    if key not in _BUDGETS:
        _BUDGETS[key] = Budget(settings, WorkLedger(path))
    return _BUDGETS[key]

"""The day's, the bundles' and the hooks' spend, summed from the work ledger alone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from executive.files import append_jsonl
from executive.settings import Settings
from executive.spend import Spend, not_reported
from executive.workspace.ledger import WorkLedger
from executive.workspace.spending import PAUSED, Budget

BERLIN = "Europe/Berlin"


def _paid(cost: float, tokens: int = 100) -> dict[str, Any]:
    return Spend(cost, tokens, tokens // 10, 0, 0, 2, 50).record(pack_tokens=40)


def _write(path: Path, ts: str, event: str, **fields: Any) -> None:
    append_jsonl(path, {"ts": ts, "event": event, **fields})


def _budget(tmp_path: Path, now: datetime, **caps: float) -> Budget:
    settings = Settings(home=tmp_path, timezone=BERLIN, **caps)
    return Budget(settings, WorkLedger(tmp_path / "work-ledger.jsonl"), now=lambda: now)


def _ledger(tmp_path: Path) -> Path:
    path = tmp_path / "work-ledger.jsonl"
    # 22:30 UTC on the 6th is 23:30 in Berlin: the 6th. 23:30 UTC is 00:30 on the 7th.
    _write(path, "2026-12-06T22:30:00+00:00", "STEP_FAILED", bundle="a", step=1, attempt=1,
           contract_id="c1", spend=_paid(0.10))  # fmt: skip
    _write(path, "2026-12-06T23:30:00+00:00", "STEP_COMPLETED", bundle="a", step=1, attempts=2,
           contract_id="c2", spend=_paid(0.25))  # fmt: skip
    _write(path, "2026-12-07T08:00:00+00:00", "STEP_COMPLETED", bundle="b", step=1, attempts=1,
           contract_id="c3", spend=not_reported(pack_tokens=12))  # fmt: skip
    _write(path, "2026-12-07T08:01:00+00:00", "EXECUTIVE_SKILL_USED", hook="post-run-harvest",
           bundle="b", engine="claude", spend=_paid(0.05, 10))  # fmt: skip
    # A command worker's step and a built-in hook carry no spend: nothing to count.
    _write(path, "2026-12-07T08:02:00+00:00", "STEP_COMPLETED", bundle="c", step=1, attempts=1)
    _write(path, "2026-12-07T08:03:00+00:00", "EXECUTIVE_SKILL_USED", hook="pre-spawn-pack")
    return path


def test_days_are_the_operators_and_not_reported_runs_count_as_runs_never_as_zero(tmp_path):
    _ledger(tmp_path)
    budget = _budget(tmp_path, datetime(2026, 12, 7, 12, tzinfo=UTC))
    summary = budget.summary()
    today = summary["today"]
    assert today["date"] == "2026-12-07" and summary["timezone"] == BERLIN
    assert (today["cost_usd"], today["runs"], today["not_reported"]) == (0.3, 3, 1)
    days = {d["date"]: d["cost_usd"] for d in summary["days"]}
    assert len(days) == 7 and days["2026-12-06"] == 0.1 and days["2026-12-01"] == 0
    assert [(b["bundle"], b["cost_usd"], b["runs"]) for b in summary["bundles"]] == [
        ("a", 0.35, 2),
        ("b", 0.05, 2),
    ]
    assert [(h["hook"], h["cost_usd"]) for h in summary["hooks"]] == [("post-run-harvest", 0.05)]
    assert summary["kinds"]["worker"]["cost_usd"] == 0.35
    assert summary["kinds"]["hook"]["input_tokens"] == 10
    runs = budget.spending.bundles["a"]
    assert [(r.name, r.spend.cost_usd, r.pack_tokens) for r in runs] == [
        ("step 1 attempt 1", 0.10, 40),
        ("step 1 attempt 2", 0.25, 40),
    ]
    assert budget.spending.bundles["b"][0].spend is None  # not reported


def test_the_day_cap_pauses_until_the_next_midnight_in_the_operators_zone(tmp_path):
    _ledger(tmp_path)
    now = datetime(2026, 12, 7, 12, tzinfo=UTC)
    assert _budget(tmp_path, now).paused() is None  # no cap: never paused
    assert _budget(tmp_path, now, budget_day_usd=0.31).paused() is None
    capped = _budget(tmp_path, now, budget_day_usd=0.3)
    pause = capped.paused()
    assert pause is not None and pause.spent == 0.3 and pause.cap == 0.3
    assert capped.summary()["paused"] == pause.as_dict()  # the summary's pause is the same
    assert pause.until.isoformat() == "2026-12-08T00:00:00+01:00"
    assert pause.describe().startswith(PAUSED)
    # The next day in Berlin (23:30 UTC is 00:30 there) the day starts from nothing.
    assert (
        _budget(tmp_path, datetime(2026, 12, 7, 23, 30, tzinfo=UTC), budget_day_usd=0.3).paused()
        is None
    )


def test_a_new_process_reads_the_same_total_and_reads_on_from_where_it_stopped(tmp_path):
    path = _ledger(tmp_path)
    now = datetime(2026, 12, 7, 12, tzinfo=UTC)
    first = _budget(tmp_path, now, budget_day_usd=1.0)
    assert first.summary()["today"]["cost_usd"] == 0.3
    restarted = _budget(tmp_path, now, budget_day_usd=1.0)  # a restart: a fresh fold, one ledger
    assert restarted.summary()["today"] == first.summary()["today"]
    _write(path, "2026-12-07T09:00:00+00:00", "STEP_COMPLETED", bundle="a", step=2, attempts=1,
           contract_id="c4", spend=_paid(0.70))  # fmt: skip
    assert first.paused() is not None and restarted.paused() is not None
    assert first.summary()["today"]["runs"] == 4


def test_the_bundle_cap_names_a_bundle_only_once_its_runs_reach_it(tmp_path):
    _ledger(tmp_path)
    budget = _budget(tmp_path, datetime(2026, 12, 7, 12, tzinfo=UTC), budget_bundle_usd=0.35)
    over = budget.bundle_over("a")
    assert over is not None and over.spend.cost_usd == 0.35 and over.runs == 2
    assert budget.bundle_over("b") is None and budget.bundle_over("never-ran") is None

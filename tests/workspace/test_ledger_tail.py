"""The work ledger read on from where it stopped: appends, torn lines, truncation, rotation."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from structlog.testing import capture_logs

from executive.files import JsonlTail, append_jsonl, read_jsonl
from executive.loop import retro
from executive.loop.contexts import Recent, pre_work
from executive.workspace.ledger import WorkLedger


def line(**record: object) -> str:
    return json.dumps(record) + "\n"


def test_each_read_returns_only_what_was_appended_since(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    tail = JsonlTail(path)
    assert tail.read() == (True, [])  # no file yet: nothing, from the start
    append_jsonl(path, {"n": 1})
    append_jsonl(path, {"n": 2})
    assert tail.read() == (True, [{"n": 1}, {"n": 2}])
    assert tail.read() == (False, [])
    append_jsonl(path, {"n": 3})
    assert tail.read() == (False, [{"n": 3}])


def test_a_torn_line_is_skipped_as_a_whole_read_skips_it(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text(line(n=1) + '{"n": 2, "tor')  # a kill mid-append
    tail = JsonlTail(path)
    assert tail.read() == (True, [{"n": 1}])  # half a line waits: it may still be written
    append_jsonl(path, {"n": 3})  # starts a fresh line after the torn one
    assert tail.read() == (False, [{"n": 3}])
    assert list(read_jsonl(path)) == [{"n": 1}, {"n": 3}]


def test_a_whole_last_line_without_its_newline_is_read_once(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text(line(n=1) + '{"n": 2}')  # killed between the record and its newline
    tail = JsonlTail(path)
    assert tail.read() == (True, [{"n": 1}, {"n": 2}])
    append_jsonl(path, {"n": 3})
    assert tail.read() == (False, [{"n": 3}])
    assert list(read_jsonl(path)) == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_truncation_or_replacement_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    tail = JsonlTail(path)
    path.write_text(line(n=1) + line(n=2))
    tail.read()
    path.write_text(line(n=9))  # truncated in place: shorter than where the tail stopped
    assert tail.read() == (True, [{"n": 9}])
    rotated = tmp_path / "new.jsonl"
    rotated.write_text(line(n=7) + line(n=8) + line(n=9))
    rotated.replace(path)  # another file under the same name
    assert tail.read() == (True, [{"n": 7}, {"n": 8}, {"n": 9}])
    path.unlink()
    assert tail.read() == (True, [])


def test_a_tail_skipped_to_the_end_returns_only_what_comes_after(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text(line(n=1) + line(n=2) + '{"n": 3}')  # the last line has no newline yet
    tail = JsonlTail(path)
    tail.skip_to_end()
    assert tail.read() == (False, [])
    append_jsonl(path, {"n": 4})  # ends the open line first, then appends its own
    with path.open("a") as handle:
        handle.write('{"n": 5, "tor' + "\n")  # a torn line: the fifth of the file
    with capture_logs() as logs:
        assert tail.read() == (False, [{"n": 4}])
    [skipped] = [e for e in logs if e["event"] == "jsonl.line_skipped"]
    assert skipped["line"] == 5  # named by its place in the whole file
    missing = JsonlTail(tmp_path / "later.jsonl")
    missing.skip_to_end()  # no file yet: everything written to it later is new
    append_jsonl(tmp_path / "later.jsonl", {"n": 1})
    assert missing.read() == (True, [{"n": 1}])


def write(path: Path, event: str, ts: datetime, **fields: object) -> None:
    append_jsonl(path, {"ts": ts.isoformat(), "event": event, **fields})


def due_from_a_whole_read(ledger: WorkLedger, now: datetime) -> retro.Due | None:
    """What `retro.due` computed before it read on incrementally (3 outcomes or 7 days)."""
    events = list(ledger.events())
    written = [e["ts"] for e in events if e.get("event") == "RETRO_WRITTEN"]
    since = written[-1] if written else ""
    fresh = [e for e in events if e.get("event") in retro.OUTCOME_EVENTS and e["ts"] > since]
    if not fresh:
        return None
    start = datetime.fromisoformat(since or events[0]["ts"])
    if len(fresh) >= 3 or now - start >= timedelta(days=7):
        return retro.Due(since, len(fresh))
    return None


def test_retro_due_counts_as_a_whole_read_would(tmp_path: Path) -> None:
    ledger = WorkLedger(tmp_path / "work-ledger.jsonl")
    kept = retro.Outcomes(ledger)  # read on, tick after tick, as the loop does
    start = datetime(2026, 1, 1, tzinfo=UTC)
    now = start + timedelta(days=1)

    def check() -> retro.Due | None:
        whole = due_from_a_whole_read(ledger, now)
        assert (
            retro.due(retro.Outcomes(ledger), after_outcomes=3, interval_days=7, now=now) == whole
        )
        assert retro.due(kept, after_outcomes=3, interval_days=7, now=now) == whole
        return whole

    assert check() is None
    write(ledger.path, "GOAL_STARTED", start)
    write(ledger.path, "STEP_FAILED", start + timedelta(hours=1))
    assert check() is None  # one outcome, a day old
    write(ledger.path, "STEP_COMPLETED", start + timedelta(hours=2))
    write(ledger.path, "GOAL_BLOCKED", start + timedelta(hours=3))
    assert check() == retro.Due("", 3)
    written = (start + timedelta(hours=4)).isoformat()
    write(ledger.path, "RETRO_WRITTEN", start + timedelta(hours=4))
    assert check() is None
    # An outcome logged before the retrospective's time (a clock step) is not a fresh one.
    write(ledger.path, "STEP_FAILED", start + timedelta(hours=3, minutes=30))
    write(ledger.path, "STEP_FAILED", start + timedelta(hours=5))
    assert check() is None
    now = start + timedelta(days=8)
    assert check() == retro.Due(written, 1)
    ledger.path.write_text("")  # emptied: nothing is due any more
    assert check() is None


def test_hook_a_sees_the_last_five_of_each_kind(tmp_path: Path) -> None:
    ledger = WorkLedger(tmp_path / "work-ledger.jsonl")
    recent = Recent(ledger)
    for n in range(7):
        ledger.append("GOAL_COMPLETED", bundle=f"done-{n}", title="t", contract_id=f"c{n}")
        ledger.append("STEP_FAILED", bundle=f"bad-{n}", contract_id=f"f{n}")
        assert len(pre_work([], "x", recent).recent_successes) == min(n + 1, 5)
    context = pre_work([], "x", recent)
    assert [o.bundle_slug for o in context.recent_successes] == [f"done-{n}" for n in range(2, 7)]
    assert [o.result for o in context.recent_failures] == ["failure"] * 5
    assert context == pre_work([], "x", Recent(ledger))  # the same as reading it whole

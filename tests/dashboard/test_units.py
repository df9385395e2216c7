"""The dashboard's parts without a daemon: health rules, charts, series, redaction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from executive.dashboard import charts, health, sources
from executive.dashboard.pages import scrub_value
from executive.observe import Observer
from executive.redact import REDACTED, learn, scrub
from executive.settings import Settings


def settings(**env: str) -> Settings:
    return Settings(IDLE_SLEEP_SECONDS="10", **env)


def test_loop_is_stalled_before_its_first_tick_and_after_two_intervals():
    observer = Observer()
    ok, why = health.loop_state(settings(), observer)
    assert not ok and "no iteration" in why
    observer.iteration_started(1)
    observer.iteration_finished(1, "idle", 5)
    tick = observer.last_tick
    assert tick is not None
    assert health.loop_state(settings(), observer, now=tick + 19.9)[0]
    ok, why = health.loop_state(settings(), observer, now=tick + 20.1)
    assert not ok and why.startswith("stalled: no tick")


def test_an_iteration_in_flight_is_busy_until_its_bound():
    observer = Observer()
    observer.iteration_started(7)
    _, since = observer.in_flight or (0, 0.0)
    s = settings(WORKER_TIMEOUT_MS="60000", EXECUTIVE_HOOK_TIMEOUT_SECONDS="10")
    bound = 60 + 3 * 10 + 20
    ok, why = health.loop_state(s, observer, now=since + bound - 1)
    assert ok and why.startswith("busy: iteration 7")
    ok, why = health.loop_state(s, observer, now=since + bound + 1)
    assert not ok and why.startswith("stalled: iteration 7")


def test_iterations_failing_in_a_row_are_unhealthy_with_the_last_error_until_one_succeeds():
    observer = Observer()
    s = settings(EXECUTIVE_UNHEALTHY_AFTER_FAILURES="2")
    for number in (1, 2):
        observer.iteration_started(number)
        assert health.loop_state(s, observer)[0]  # one failure is not yet a pattern
        observer.iteration_finished(number, "failed", 3, error=f"OSError: disk full {number}")
    ok, why = health.loop_state(s, observer)
    assert not ok and why.startswith("failing: the last 2 iterations failed")
    assert why.endswith("OSError: disk full 2")
    observer.iteration_started(3)
    assert not health.loop_state(s, observer)[0]  # until an iteration actually succeeds
    observer.iteration_finished(3, "busy", 3)
    ok, why = health.loop_state(s, observer)
    assert ok and why.startswith("ticking")


def test_stopping_is_unhealthy():
    observer = Observer()
    observer.iteration_started(1)
    observer.stopping = True
    assert health.loop_state(settings(), observer) == (False, "stopping")


def test_skipped_hook_runs_are_counted_not_listed():
    class Result:
        hook, engine, duration_ms, error, reason = "pre-work-selection", None, 0, None, "off"
        final_text, memory_pack, details, outcome, histogram, tail = "", None, {}, "skipped", {}, ""
        writes = None

    observer = Observer()
    observer.hook_finished(Result())
    assert observer.hook_counts[("pre-work-selection", "skipped")] == 1
    assert not observer.hook_runs


def test_lines_and_bars_draw_every_series_and_escape_labels():
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    svg = charts.lines(
        "durations", {"<b>": [(t0, 1.0), (t0 + timedelta(minutes=1), 2.0)], "x": [(t0, 0.5)]}
    )
    assert svg.count("<polyline") == 2 and "&lt;b&gt;" in svg and "<b>" not in svg
    bars = charts.bars("attempts", {"passed": {1: 3, 2: 1}, "blocked": {3: 1}})
    assert bars.count("<rect") >= 6  # bars plus legend swatches
    assert "no data yet" in charts.lines("empty", {})


def test_memory_growth_replays_the_harvest_ledger():
    def line(ts: str, op: str, key: str, status: str, kind: str | None = None) -> dict:
        entry = {"ts": ts, "op": op, "key": key, "attempt": key + op, "status": status}
        if kind:
            entry["payload"] = {"metadata": {"type": kind}}
        return entry

    entries = [
        line("2026-01-01T00:00:00+00:00", "add", "a", "PENDING", "semantic"),
        line("2026-01-01T00:00:01+00:00", "add", "a", "SUCCEEDED"),
        line("2026-01-01T00:00:02+00:00", "add", "b", "PENDING", "semantic"),
        line("2026-01-01T00:00:03+00:00", "add", "b", "ERROR"),
        line("2026-01-02T00:00:00+00:00", "add", "c", "PENDING", "semantic"),
        line("2026-01-02T00:00:01+00:00", "add", "c", "SUCCEEDED"),
        line("2026-01-03T00:00:00+00:00", "delete", "a", "SUCCEEDED"),
    ]
    series = sources.memory_growth(entries)
    assert [n for _, n in series["semantic"]] == [1, 2, 1]


def test_tail_jsonl_reads_only_the_end(tmp_path):
    path = tmp_path / "ledger.jsonl"
    path.write_text("".join(f'{{"n": {i}}}\n' for i in range(1000)))
    records = sources.tail_jsonl(path, max_bytes=100)
    assert records and records[-1] == {"n": 999} and len(records) < 20
    assert sources.tail_jsonl(tmp_path / "missing.jsonl") == []


def test_scrub_uses_the_log_redactor():
    learn(secrets=["dashboard-secret-123456"])
    assert scrub("token dashboard-secret-123456 here") == f"token {REDACTED} here"
    assert scrub_value(3) == 3


def test_hook_runs_from_before_this_start_come_from_the_work_ledger():
    ledger = [
        {
            "ts": "2026-01-01T00:00:00+00:00",
            "event": "EXECUTIVE_SKILL_USED",
            "hook": "pre-spawn-pack",
            "engine": "builtin",
            "outcome": "ok",
            "duration_ms": 12,
            "tools": {"memory.search": 3},
            "writes": {"attempted": 0, "succeeded": 0, "skipped": 0, "failed": 0},
        },
        {
            "ts": "2026-01-01T00:00:01+00:00",
            "event": "EXECUTIVE_SKILL_USED",
            "hook": "pre-work-selection",
            "outcome": "skipped",
        },
        {
            "ts": "2026-01-02T00:00:00+00:00",
            "event": "EXECUTIVE_SKILL_USED",
            "hook": "post-run-harvest",
            "engine": "builtin",
            "outcome": "ok",
            "duration_ms": 40,
        },
        {"ts": "2026-01-01T00:00:02+00:00", "event": "STEP_STARTED"},
    ]
    runs = sources.ledger_runs(ledger, before="2026-01-01T12:00:00+00:00")
    assert [(r.hook, r.duration_ms, r.tools) for r in runs] == [
        ("pre-spawn-pack", 12, {"memory.search": 3})
    ]


def test_dashboard_settings_bind_loopback_and_token():
    import pytest
    from pydantic import ValidationError

    assert Settings().dashboard_host_port == ("127.0.0.1", 8377)
    # Loopback binds need no token.
    assert Settings(EXECUTIVE_DASHBOARD_BIND="[::1]:0").dashboard_host_port == ("::1", 0)
    assert Settings(EXECUTIVE_DASHBOARD_BIND="localhost:9000").dashboard_host_port[1] == 9000
    for bad in ("8377", "127.0.0.1:", "127.0.0.1:99999", ":8377"):
        with pytest.raises(ValidationError, match="HOST:PORT"):
            Settings(EXECUTIVE_DASHBOARD_BIND=bad)
    with pytest.raises(ValidationError, match="EXECUTIVE_DASHBOARD_TOKEN"):
        Settings(EXECUTIVE_DASHBOARD_BIND="0.0.0.0:8377")
    # With a token, or with the dashboard off, any address is accepted.
    token = Settings(EXECUTIVE_DASHBOARD_BIND="0.0.0.0:8377", EXECUTIVE_DASHBOARD_TOKEN="t" * 20)
    assert "t" * 20 in token.secret_values()  # so the logs redact it too
    assert not Settings(EXECUTIVE_DASHBOARD_BIND="0.0.0.0:1", EXECUTIVE_DASHBOARD="false").dashboard


@pytest.mark.anyio
async def test_drift_counts_a_peer_homes_memories_as_expected_not_extra(tmp_path):
    from executive.files import append_jsonl
    from executive.home import Home
    from executive.memory.store.base import MemoryRecord

    homes = [Home(tmp_path / name) for name in ("a", "b")]
    for home, key in zip(homes, ("k-a", "k-b"), strict=True):
        line = {"op": "add", "attempt": key, "key": key, "payload": {"text": key}}
        append_jsonl(home.harvest_runs / "2026-12-01.jsonl", {**line, "status": "SUCCEEDED"})

    class View:
        async def list(self, where):
            return [MemoryRecord(id=k, text=k, metadata={"key": k}) for k in ("k-a", "k-b")]

    alone = await sources.drift(View(), homes[0])
    shared = await sources.drift(View(), homes[0], [homes[1].root])
    assert alone == {"missing": 0, "extra": 1}
    assert shared == {"missing": 0, "extra": 0}


@pytest.mark.anyio
async def test_drift_counts_only_this_installations_memories_on_a_shared_store(tmp_path):
    from executive.files import append_jsonl
    from executive.home import Home
    from executive.memory.store.base import MemoryRecord

    home = Home(tmp_path / "a")
    line = {"op": "add", "attempt": "k-a", "key": "k-a", "payload": {"text": "k-a"}}
    append_jsonl(home.harvest_runs / "2026-12-01.jsonl", {**line, "status": "SUCCEEDED"})
    rows = [
        MemoryRecord(id="1", text="a", user_id="mine", metadata={"key": "k-a"}),
        MemoryRecord(id="2", text="b", user_id="theirs", metadata={"key": "k-b"}),
    ]

    class View:
        async def list(self, where):
            return [r for r in rows if where is None or where.matches(r)]

    assert await sources.drift(View(), home, user_id="mine") == {"missing": 0, "extra": 0}
    assert await sources.drift(View(), home) == {"missing": 0, "extra": 1}


@pytest.mark.anyio
async def test_a_scrape_answers_without_the_store_and_the_log_says_why(tmp_path):
    from structlog.testing import capture_logs

    from executive.dashboard.pages import Context
    from executive.dashboard.routes import _figures
    from executive.memory.runtime import MemoryRuntime
    from executive.testing import InMemoryStore
    from tests.memory.faults import FaultyStore

    conf = settings(EXECUTIVE_HOME=str(tmp_path))
    store = FaultyStore(await InMemoryStore.open(tmp_path / "store"), calls=("list",))
    store.mode = "raise"
    runtime = MemoryRuntime(conf, store=store)  # type: ignore[arg-type]
    ctx = Context(conf, Observer(), runtime, status=dict)
    with capture_logs() as logs:
        figures = await _figures(ctx)
    assert figures.by_type == {}
    assert figures.queue["ondeck"] == 0
    [line] = [e for e in logs if e["event"] == "metrics.store_unreadable"]
    assert line["error"] == "StoreError: list failed: injected outage"
    assert line["log_level"] == "warning"


@pytest.mark.anyio
async def test_a_scrape_folds_the_harvest_ledger_off_the_event_loop(tmp_path):
    # Its pending writes are a fold of the whole ledger (18,000 memories: ~0.85 s), which
    # held the dashboard, the control socket and the watchdog when it ran on the loop.
    import threading

    from executive.dashboard.pages import Context
    from executive.dashboard.routes import _figures
    from executive.memory.runtime import MemoryRuntime

    conf = settings(EXECUTIVE_HOME=str(tmp_path))
    runtime = MemoryRuntime(conf)
    threads: set[int] = set()

    def pending_writes() -> int:
        threads.add(threading.get_ident())
        return 3

    runtime.pending_writes = pending_writes  # type: ignore[method-assign]
    figures = await _figures(Context(conf, Observer(), runtime, status=dict))
    assert figures.pending_writes == 3
    assert threads and threading.get_ident() not in threads

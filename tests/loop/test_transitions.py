"""One recorder writes every transition: state file, ledger, log line, PROGRESS log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from executive.files import UnsafeFile
from executive.home import Home
from executive.loop import transitions
from executive.loop.attempt import Attempt
from executive.workspace.ledger import WorkLedger
from executive.workspace.lifecycle import Active, Workspace
from executive.workspace.state import LOG_FILE, STATE_FILE
from tests.hooks.conftest import logs  # noqa: F401  (the fixture)
from tests.loop.homes import add_bundle, make_home


@pytest.fixture
def started(tmp_path: Path) -> tuple[transitions.Recorder, Active, WorkLedger]:
    home = Home(make_home(tmp_path))
    add_bundle(home.root, "greet", "true\n")
    workspace = Workspace(home, "command")
    [active] = workspace.ingest()
    ledger = WorkLedger(home.work_ledger)
    return transitions.Recorder(workspace, ledger), active, ledger


def test_a_transition_is_recorded_four_ways(started, logs):  # noqa: F811
    recorder, active, ledger = started
    step = active.state.steps[0]
    step.status = "in_progress"
    recorder.record(active, transitions.step_started(step, "contract-1", "command"))

    saved = json.loads((active.bundle.folder / STATE_FILE).read_text())
    assert saved["steps"][0]["status"] == "in_progress"
    [event] = list(ledger.events("STEP_STARTED"))
    assert (event["bundle"], event["contract_id"], event["attempt"]) == ("greet", "contract-1", 1)
    [line] = [r for r in logs() if r["event"] == "step.started"]
    assert (line["step"], line["attempt"], line["vendor"]) == (1, 1, "command")
    progress = (active.bundle.folder / LOG_FILE).read_text()
    assert "step 1 attempt 1 started (contract-1)" in progress


def test_a_planted_progress_log_fails_only_after_state_ledger_and_log(started, logs):  # noqa: F811
    recorder, active, ledger = started
    step = active.state.steps[0]
    log_file = active.bundle.folder / LOG_FILE
    log_file.unlink(missing_ok=True)
    log_file.symlink_to(active.bundle.folder / "elsewhere")
    attempt = Attempt(contract_id="contract-2", passed=False, error="boom")
    with pytest.raises(UnsafeFile):
        recorder.record(active, transitions.step_failed(step, attempt, "boom"))
    assert [e["signal"] for e in ledger.events("STEP_FAILED")] == ["boom"]
    assert [r["event"] for r in logs()].count("step.failed") == 1


def test_a_retry_is_state_and_log_only(started, logs):  # noqa: F811
    recorder, active, ledger = started
    step = active.state.steps[0]
    step.retry_after = "2030-01-01T00:00:00+00:00"
    recorder.record(active, transitions.retry_scheduled(step, 30.0))
    assert list(ledger.events()) == []
    [line] = [r for r in logs() if r["event"] == "step.retry_scheduled"]
    assert (line["wait_seconds"], line["retry_after"]) == (30.0, step.retry_after)
    saved = json.loads((active.bundle.folder / STATE_FILE).read_text())
    assert saved["steps"][0]["retry_after"] == step.retry_after


def test_a_kept_diagnosis_is_the_state_file_only(started, logs):  # noqa: F811
    recorder, active, ledger = started
    step = active.state.steps[0]
    step.diagnosis = "the network is down"
    recorder.record(active, transitions.diagnosis_kept())
    assert list(ledger.events()) == []
    assert [r for r in logs() if r["event"].startswith("step.")] == []
    saved = json.loads((active.bundle.folder / STATE_FILE).read_text())
    assert saved["steps"][0]["diagnosis"] == "the network is down"

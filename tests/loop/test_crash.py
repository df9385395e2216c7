"""Crash safety: SIGTERM while a worker runs, SIGKILL while a worker runs, torn ledger lines."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from executive.home import Home
from executive.workers.isolation.process import start_time
from executive.workspace.lifecycle import Workspace
from tests.conftest import json_lines, run_cli
from tests.daemonproc import Daemon
from tests.fifo import Fifo
from tests.loop.homes import add_bundle, events, ledger, make_home, outputs

SLOW = 'echo "start $GOAL_ATTEMPT" >> runs.log\nsleep "${SLEEP:-4}"\necho "done $GOAL_ATTEMPT" >> runs.log\necho ok > out.txt\n'


def alive(pid: int, started: int | None) -> bool:
    """Running, not merely a zombie waiting for pid 1 (which reaps when it gets to it)."""
    if started is None or start_time(pid) != started:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def worker_pid(home) -> tuple[int, int]:
    [pid_file] = list((home / ".state" / "pids").glob("*.json"))
    info = json.loads(pid_file.read_text())
    return info["pid"], info["start"]


def test_sigterm_mid_worker_ends_the_worker_within_the_grace_and_exits_zero(tmp_path):
    home = make_home(tmp_path, EXECUTIVE_SHUTDOWN_GRACE_SECONDS="1")
    add_bundle(home, "slow", SLOW.replace("${SLEEP:-4}", "60"))
    daemon = Daemon(home)
    try:
        daemon.wait_for("worker.started", timeout=60)
        pid, started = worker_pid(home)
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(120) == 0  # a hang guard; the log below shows the grace ended it
    finally:
        daemon.kill()
    assert not alive(pid, started)
    records = json_lines("".join(daemon.lines))
    assert [r for r in records if r["event"] == "shutdown.grace_expired"]
    assert [r for r in records if r["event"] == "worker.cancelled"]


def test_a_sigkill_mid_worker_then_restart_completes_the_bundle_exactly_once(tmp_path):
    # Not sandboxed: bubblewrap's --die-with-parent ends a sandboxed worker with the daemon
    # (how soon depends on the machine); here the worker must outlive it, to be reaped.
    home = make_home(tmp_path, EXECUTIVE_WORKER_ISOLATION="none")
    # Each attempt says on this pipe that it started (the log line written first).
    with Fifo(tmp_path / "started") as attempts:
        slow = SLOW.replace("${SLEEP:-4}", "${SLEEP:-30}").replace(
            "runs.log\n", f'runs.log\necho "start $GOAL_ATTEMPT" > {attempts.path}\n', 1
        )
        add_bundle(
            home, "sturdy", slow, verifiers=[{"builtin": "output_exists", "path": "out.txt"}]
        )
        first = Daemon(home)
        try:
            first.wait_for("worker.started", timeout=60)
            pid, started = worker_pid(home)
            # Started is not yet running its script: the script must be read (and the slow sleep
            # begun) before it is changed below, or this attempt runs the quick one.
            assert attempts.line(first.proc, log=first.tail) == "start 1"
            first.proc.send_signal(signal.SIGKILL)
            first.proc.wait(10)
        finally:
            first.kill()
        assert alive(pid, started), "the worker outlives a SIGKILLed daemon (its own session)"
        # A torn line, as if the kill had landed mid-append.
        with (home / "ledgers" / "work-ledger.jsonl").open("a") as handle:
            handle.write('{"ts": "2026-12-02T00:00:00", "event": "STEP_STA')

        # Make the retry quick, then restart.
        script = home / "workspace" / "in-progress" / "P3" / "sturdy" / "work.sh"
        script.write_text(script.read_text().replace("${SLEEP:-30}", "0"))
        second = Daemon(home)
        try:
            second.wait_for("goal.completed", timeout=120, bundle="sturdy")
            assert attempts.line(second.proc, log=second.tail) == "start 2"
            second.signal(signal.SIGTERM)
            assert second.wait(30) == 0
        finally:
            second.kill()

    assert not alive(pid, started), "the orphaned worker was ended at start-up"
    assert len(events(home, "GOAL_COMPLETED", bundle="sturdy")) == 1
    assert len(events(home, "WORKER_ORPHAN_ENDED")) == 1
    [interrupted] = events(home, "STEP_INTERRUPTED", bundle="sturdy")
    assert interrupted["attempt"] == 1
    [completed] = events(home, "STEP_COMPLETED", bundle="sturdy")
    assert completed["attempts"] == 2
    runs = (outputs(home) / "sturdy" / "runs.log").read_text().split()
    assert runs.count("done") == 1  # the interrupted run never finished
    state = json.loads((home / "workspace" / "completed" / "sturdy" / "STEPS.json").read_text())
    assert state["status"] == "completed" and state["steps"][0]["status"] == "done"
    assert len(ledger(home)) > 5  # every line but the torn one parses


def test_a_goal_whose_last_step_was_done_when_the_daemon_stopped_completes_on_restart(tmp_path):
    # The state a stop between the last step's record and the goal's leaves (Hook C runs
    # there: a harvest, or an LLM for minutes): the step done, the goal still active.
    home = make_home(tmp_path)
    add_bundle(home, "almost", "echo ok > out.txt\n")
    workspace = Workspace(Home(home), "command")
    [active] = workspace.ingest()
    step = active.state.steps[0]
    step.status, step.contract_id = "done", "contract-before-the-stop"
    workspace.save(active)

    for _ in range(2):  # the second start finds nothing left to recover
        result = run_cli("--home", str(home), "run", "--once")
        assert result.returncode == 0, result.stderr

    [completed] = events(home, "GOAL_COMPLETED", bundle="almost")
    assert completed["recovered"] is True
    assert completed["contract_id"] == "contract-before-the-stop"
    assert events(home, "STEP_STARTED", bundle="almost") == []  # nothing ran again
    state = json.loads((home / "workspace" / "completed" / "almost" / "STEPS.json").read_text())
    assert state["status"] == "completed"
    assert not (home / "workspace" / "in-progress" / "P3" / "almost").exists()


def test_an_unwritable_worker_folder_or_missing_executable_blocks_with_a_clear_entry(tmp_path):
    home = make_home(tmp_path)
    add_bundle(home, "ghost", "true\n", command=["definitely-not-installed-binary", "{output_dir}"])
    result = run_cli("--home", str(home), "run", "--once")
    assert result.returncode == 0, result.stderr
    [blocked] = events(home, "GOAL_BLOCKED", bundle="ghost")
    assert "cannot start the worker (definitely-not-installed-binary)" in blocked["reason"]
    assert "blocked: ghost" in (home / "workspace" / "needs-you.md").read_text()


def test_naming_a_memory_key_for_workers_stops_start_up(tmp_path):
    home = make_home(tmp_path, EXECUTIVE_WORKER_ENV="V3_MEM0_API_KEY,EXTRA_OK")
    result = run_cli("--home", str(home), "run", "--once")
    assert result.returncode == 2
    [problem] = json.loads(result.stdout)["problems"]  # the log is JSON: so is the error
    assert problem["variable"] == "EXECUTIVE_WORKER_ENV"
    assert "never reach a worker: V3_MEM0_API_KEY" in problem["why"]


def test_a_memory_key_under_another_name_is_refused_at_spawn(tmp_path):
    key = "m0-secretsecretsecret"
    home = make_home(tmp_path, EXECUTIVE_WORKER_ENV="COPIED_KEY")
    add_bundle(home, "leaky", "env > env.txt\n")
    env = {"V3_MEM0_API_KEY": key, "COPIED_KEY": key}
    result = run_cli("--home", str(home), "run", "--once", env=env)
    assert result.returncode == 0, result.stderr
    refused = [r for r in json_lines(result.stdout) if r["event"] == "worker.refused"]
    assert refused and refused[0]["variables"] == ["COPIED_KEY"]
    assert not (outputs(home) / "leaky" / "env.txt").exists()
    [blocked] = events(home, "GOAL_BLOCKED", bundle="leaky")
    assert "executive-tier variables would reach the worker: COPIED_KEY" in blocked["reason"]
    assert key not in result.stdout


def test_a_worker_that_cannot_start_blocks_its_bundle_with_the_fix(tmp_path):
    home = make_home(tmp_path, EXECUTIVE_CLAUDE_BIN="/nowhere/claude")
    add_bundle(home, "needs-claude", "", vendor="claude", command=None)
    result = run_cli("--home", str(home), "run", "--once")
    assert result.returncode == 0, result.stderr
    entry = (home / "workspace" / "needs-you.md").read_text()
    assert "cannot start the worker (/nowhere/claude): no such program" in entry
    assert "EXECUTIVE_CLAUDE_BIN" in entry and "vendor: command" in entry

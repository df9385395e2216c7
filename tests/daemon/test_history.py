"""Ledgers reach git: a commit after each iteration with outcomes, none without."""

from __future__ import annotations

import subprocess

import pytest

from executive.daemon.history import History, message
from executive.home import Home
from executive.workspace.ledger import WorkLedger
from tests.conftest import run_cli
from tests.loop.homes import add_bundle, make_home

pytestmark = pytest.mark.anyio


def git_log(home) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(home), "log", "--format=%s"], capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def tracked(home) -> set[str]:
    out = subprocess.run(
        ["git", "-C", str(home), "ls-files"], capture_output=True, text=True, check=True
    )
    return set(out.stdout.splitlines())


async def test_outcomes_of_one_iteration_share_one_commit(tmp_path):
    home = Home(make_home(tmp_path))
    history = History(home)
    await history.start()
    before = len(git_log(home.root))
    ledger = WorkLedger(home.work_ledger)
    ledger.append("STEP_STARTED", bundle="alpha", step=1)
    assert await history.after_iteration() is False  # no outcome, no commit
    ledger.append("STEP_COMPLETED", bundle="alpha", step=1, attempts=2)
    ledger.append("GOAL_COMPLETED", bundle="alpha")
    assert await history.after_iteration() is True
    log = git_log(home.root)
    assert len(log) == before + 1
    assert log[0] == "chore(executive): alpha step passed (step 1, attempt 2); alpha completed"
    assert "ledgers/work-ledger.jsonl" in tracked(home.root)
    assert await history.after_iteration() is False


async def test_start_commits_what_an_earlier_run_left(tmp_path):
    home = Home(make_home(tmp_path))
    ledger = WorkLedger(home.work_ledger)
    ledger.append("GOAL_BLOCKED", bundle="beta")
    history = History(home)
    assert await history.start() is True
    assert "ledgers/work-ledger.jsonl" in tracked(home.root)
    ledger.append("STEP_STARTED", bundle="beta", step=1)
    assert await history.after_iteration() is False  # beta's block was before its start


def test_a_long_batch_names_five_and_counts_the_rest():
    text = message([f"b{i} completed" for i in range(8)])
    assert text.endswith("b4 completed (+3 more)")


def test_the_daemon_commits_the_outcome_of_a_bundle_by_default(tmp_path):
    home = make_home(tmp_path)
    add_bundle(home, "poem", "echo roses > poem.txt\n")
    result = run_cli("--home", str(home), "run", "--once")
    assert result.returncode == 0, result.stderr
    assert any("poem completed" in line for line in git_log(home))
    assert "ledgers/work-ledger.jsonl" in tracked(home)
    # The workspace is committed with the outcome: the bundle where it now is, and the home
    # is clean afterwards (nothing of it left untracked or modified).
    assert "workspace/completed/poem/STEPS.json" in tracked(home)
    assert "workspace/ondeck/poem/PROMPT.md" not in tracked(home)
    status = subprocess.run(
        ["git", "-C", str(home), "status", "--porcelain"], capture_output=True, text=True
    )
    assert status.stdout == ""


def test_commits_are_off_by_a_setting(tmp_path):
    home = make_home(tmp_path, EXECUTIVE_GIT_COMMIT="false")
    add_bundle(home, "poem", "echo roses > poem.txt\n")
    assert run_cli("--home", str(home), "run", "--once").returncode == 0
    assert "ledgers/work-ledger.jsonl" not in tracked(home)


def test_a_large_file_beside_a_bundle_stays_out_of_the_history_and_a_moved_bundle_leaves_it(
    tmp_path,
):
    from executive.workspace import kept

    home = make_home(tmp_path)
    folder = add_bundle(home, "poem", "echo roses > poem.txt\n")
    with (folder / "data.bin").open("wb") as handle:
        handle.truncate(kept.MAX_BYTES + 1)
    assert run_cli("--home", str(home), "run", "--once").returncode == 0
    files = tracked(home)
    assert "workspace/completed/poem/PROMPT.md" in files
    assert "workspace/completed/poem/data.bin" not in files
    assert not any(name.startswith("workspace/ondeck/poem/") for name in files)
    status = subprocess.run(
        ["git", "-C", str(home), "status", "--porcelain"], capture_output=True, text=True
    )
    assert status.stdout == "?? workspace/completed/poem/data.bin\n"

"""Break 1 end to end: the real daemon, every bad bundle form queued beside a good bundle."""

from __future__ import annotations

import json
import os
import signal

from tests.daemonproc import Daemon
from tests.loop.homes import add_bundle, events, make_home, outputs


def test_bad_bundles_are_quarantined_the_good_one_completes_and_sigterm_is_obeyed(tmp_path):
    home = make_home(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    add_bundle(home, "good", "echo done > out.txt\n", priority="P4")

    fifo = add_bundle(home, "fifo", "true\n", priority="P0")
    (fifo / "PROMPT.md").unlink()
    os.mkfifo(fifo / "PROMPT.md")
    zero = add_bundle(home, "zero", "true\n", priority="P0")
    (zero / "PROMPT.md").unlink()
    (zero / "PROMPT.md").symlink_to("/dev/zero")
    huge = add_bundle(home, "huge", "true\n", priority="P0")
    with (huge / "PROMPT.md").open("r+b") as handle:
        handle.truncate(1 << 30)  # sparse
    torn = add_bundle(home, "torn", "true\n", priority="P0")
    (torn / "STEPS.json").write_text('{"slug": "torn", "st')
    elsewhere = add_bundle(home, "elsewhere", "echo pwned > out.txt\n", priority="P0")
    elsewhere.rename(outside / "elsewhere")
    elsewhere.symlink_to(outside / "elsewhere", target_is_directory=True)
    # Already in progress, its state schema-invalid: it failed every iteration before.
    stuck = add_bundle(home, "stuck", "true\n", priority="P0")
    target = home / "workspace" / "in-progress" / "P0" / "stuck"
    target.parent.mkdir(parents=True, exist_ok=True)
    stuck.rename(target)
    (target / "STEPS.json").write_text(json.dumps({"slug": "stuck", "steps": 3}))
    # Interrupted mid-step, its log a link out of the home: start-up used to append through it.
    linked = add_bundle(home, "linked-log", "true\n", priority="P0")
    moved = home / "workspace" / "in-progress" / "P0" / "linked-log"
    linked.rename(moved)
    step = {"number": 1, "title": "Bundle linked-log", "status": "in_progress"}
    state = {"slug": "linked-log", "title": "x", "priority": "P0", "steps": [step]}
    (moved / "STEPS.json").write_text(json.dumps(state))
    (outside / "victim.txt").write_text("untouched\n")
    (moved / "PROGRESS_LOG.md").symlink_to(outside / "victim.txt")

    daemon = Daemon(home)
    try:
        daemon.wait_for("goal.completed", timeout=120, bundle="good")
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(60) == 0
    finally:
        daemon.kill()

    assert (outputs(home) / "good" / "out.txt").read_text() == "done\n"
    assert events(home, "GOAL_COMPLETED", bundle="good")
    blocked = home / "workspace" / "blocked"
    assert sorted(p.name for p in blocked.iterdir() if p.name != ".gitkeep") == [
        "elsewhere",
        "fifo",
        "huge",
        "linked-log",
        "stuck",
        "torn",
        "zero",
    ]
    assert (blocked / "elsewhere").is_symlink()
    assert sorted(p.name for p in (outside / "elsewhere").iterdir()) == [
        "PROMPT.md",
        "work.sh",
    ]  # untouched
    assert (blocked / "stuck" / "STEPS.json").read_text().startswith('{"slug": "stuck"')
    needs_you = (home / "workspace" / "needs-you.md").read_text()
    assert (outside / "victim.txt").read_text() == "untouched\n"
    for slug in ("fifo", "zero", "huge", "torn", "elsewhere", "stuck", "linked-log"):
        assert f"malformed bundle: {slug}" in needs_you
    assert not [r for r in daemon.records if r.get("event") == "iteration.failed"]

"""Issue 37, break 1 and 2, against a real daemon: what a worker leaves in its folder never
breaks the loop.

A file name over the path limit and one that is not UTF-8 used to raise outside the attempt:
the iteration failed, the step stayed in progress with no attempt counted, and the next
iteration started the worker again (259 starts in five minutes, for a bundle allowed two).
A folder of very many files was walked on the event loop, twice per attempt. Here, in a
sandbox: the failing bundle is blocked after exactly its two starts, the passing one with the
same names completes, and a folder past the file count completes with its changes unknown.
"""

from __future__ import annotations

import signal

import pytest

from tests.daemonproc import Daemon
from tests.loop.homes import add_bundle, events, make_home

# A 201-character relative path (two folders and a name) and a name whose bytes are not UTF-8.
NAMES = """
mkdir -p "$(printf 'd%.0s' $(seq 100))/$(printf 'e%.0s' $(seq 90))"
touch "$(printf 'd%.0s' $(seq 100))/$(printf 'e%.0s' $(seq 90))/long-name1"
touch "$(printf 'caf\\351.txt')"
echo kept > kept.txt
"""
MAX_FILES = 500
MANY = f"""
mkdir many && cd many && seq {MAX_FILES + 100} | xargs touch && cd ..
echo ok > out.txt
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory):
    home = make_home(
        tmp_path_factory.mktemp("leftovers"), EXECUTIVE_WORKER_FOLDER_MAX_FILES=str(MAX_FILES)
    )
    add_bundle(home, "names-fail", NAMES + "exit 1\n", priority="P0", max_attempts=2)
    add_bundle(
        home,
        "names-pass",
        NAMES,
        priority="P1",
        verifiers=[{"builtin": "output_exists", "path": "kept.txt"}],
    )
    add_bundle(
        home,
        "many",
        MANY,
        priority="P2",
        verifiers=[{"builtin": "output_exists", "path": "out.txt"}],
    )
    daemon = Daemon(home)
    try:
        daemon.wait_for("goal.blocked", timeout=240, bundle="names-fail")
        for slug in ("names-pass", "many"):
            daemon.wait_for("goal.completed", timeout=240, bundle=slug)
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(60) == 0
    finally:
        daemon.kill()
    return home, daemon


def test_names_that_cannot_be_kept_never_fail_an_iteration(ran):
    home, daemon = ran
    assert not [r for r in daemon.records if r.get("event") == "iteration.failed"]
    # Exactly its two starts, both counted, then blocked.
    assert len(events(home, "STEP_STARTED", bundle="names-fail")) == 2
    assert [f["attempt"] for f in events(home, "STEP_FAILED", bundle="names-fail")] == [1, 2]
    [blocked] = events(home, "GOAL_BLOCKED", bundle="names-fail")
    assert "failed 2 times (limit 2)" in blocked["reason"]
    [completed] = events(home, "STEP_COMPLETED", bundle="names-pass")
    assert completed["attempts"] == 1


def test_the_digest_says_what_it_left_out(ran):
    home, _ = ran
    [completed] = events(home, "STEP_COMPLETED", bundle="names-pass")
    experience = completed["experience"]
    assert [f["path"] for f in experience["files"]] == ["kept.txt"]
    assert experience["notes"][0].startswith("2 changed files whose names cannot be kept")


def test_a_folder_past_the_file_count_completes_with_its_changes_unknown(ran):
    home, daemon = ran
    [completed] = events(home, "STEP_COMPLETED", bundle="many")
    assert "too large to compare" in completed["experience"]["notes"][0]
    finished = [
        r
        for r in daemon.records
        if r.get("event") == "worker.finished" and r.get("bundle") == "many"
    ]
    assert finished and finished[0]["folder_compared"] is False
    assert finished[0]["folder_files"] == MAX_FILES
    assert {"folder_seconds", "record_seconds"} <= finished[0].keys()

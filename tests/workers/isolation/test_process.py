from __future__ import annotations

import json
import os
import secrets
import subprocess
from functools import partial
from pathlib import Path

import anyio
import pytest

from executive.workers.isolation import process, sandbox
from executive.workers.isolation.process import MARK, reap_orphans, run, start_time
from executive.workers.verifiers import Check, run_all
from tests.isolation import alive_with

pytestmark = pytest.mark.anyio
ENV = {"PATH": os.environ["PATH"]}


def shell(tmp_path: Path, script: str, contract_id: str, **options: object):
    """``run`` of ``sh -c script`` in ``tmp_path``: its log and pid files there, ``ENV`` and a
    30 s limit unless ``options`` say otherwise."""
    kwargs = {
        "cwd": tmp_path,
        "env": ENV,
        "timeout_seconds": 30,
        "log_path": tmp_path / "run.log",
        "pid_dir": tmp_path / "pids",
        "contract_id": contract_id,
        **options,
    }
    return run(["sh", "-c", script], **kwargs)  # type: ignore[arg-type]


async def test_a_timeout_terminates_then_kills_the_whole_process_group(tmp_path, monkeypatch):
    # The worker ignores SIGTERM and leaves a grandchild behind: both must go. It ignores
    # SIGTERM for ever, so a shorter grace only shortens the wait for the SIGKILL.
    monkeypatch.setattr(process, "TERM_GRACE_SECONDS", 0.5)
    marker = f"60.{secrets.randbelow(10**6):06d}"  # this run's grandchild, by its command line
    script = f"trap '' TERM; sleep {marker} & echo $! > child.pid; while true; do sleep 1; done"
    # The limit must outlast the shell's start, which no fixed figure promises on a busy
    # machine: a run that ended before the grandchild was there proves nothing, and is run
    # again with twice the limit.
    for limit in (1, 2, 4, 8, 16, 32):
        (tmp_path / "child.pid").unlink(missing_ok=True)
        result = await shell(tmp_path, script, "c1", timeout_seconds=limit)
        assert result.timed_out
        if (tmp_path / "child.pid").exists():
            break
    child = int((tmp_path / "child.pid").read_text())
    # run() returns only once the group is gone: no waiting here.
    assert start_time(child) is None or _zombie(child)
    assert alive_with(marker) == []
    assert list((tmp_path / "pids").iterdir()) == []


async def test_output_goes_to_the_run_log_and_the_exit_code_is_kept(tmp_path):
    result = await shell(
        tmp_path, "echo out; echo err >&2; exit 7", "c2", log_path=tmp_path / "logs" / "run.log"
    )
    assert result.exit_code == 7 and not result.timed_out
    assert result.tail() == "out\nerr\n"


async def test_cancellation_ends_the_worker(tmp_path):
    # The worker says it is running through a FIFO; the test cancels once it has read that,
    # whatever the time it took.
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    async with anyio.create_task_group() as group:
        group.start_soon(
            partial(shell, tmp_path, f"echo $$ > {ready}; sleep 60", "c3", timeout_seconds=60)
        )
        pid = int(await anyio.to_thread.run_sync(ready.read_text))
        group.cancel_scope.cancel()
    assert start_time(pid) is None or _zombie(pid)


def test_orphans_from_pid_files_are_ended_and_recycled_pids_spared(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    orphan = subprocess.Popen(["sleep", "60"], start_new_session=True)
    (pids / "c4.json").write_text(
        json.dumps(
            {
                "pid": orphan.pid,
                "pgid": orphan.pid,
                "start": start_time(orphan.pid),
                "contract_id": "c4",
            }
        )
    )
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    (pids / "c5.json").write_text(
        json.dumps({"pid": bystander.pid, "pgid": bystander.pid, "start": 1, "contract_id": "c5"})
    )
    assert reap_orphans(pids) == ["c4"]
    assert orphan.wait(5) is not None
    assert bystander.poll() is None  # its start time did not match: not ours
    bystander.kill()
    bystander.wait()
    assert list(pids.iterdir()) == []


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


ISOLATIONS = [
    pytest.param(
        "sandbox",
        marks=pytest.mark.skipif(
            sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot run here"
        ),
    ),
    "none",
]


def unique() -> tuple[str, str]:
    """A run mark and a sleep length no other test run on this machine uses: the daemon ends
    every process carrying its run's mark, and these tests look for leftovers by command."""
    n = secrets.randbelow(10**6)
    return f"c-{n}", f"12{n % 10}.{n}"


@pytest.mark.parametrize("mode", ISOLATIONS)
async def test_a_verifier_pipeline_at_its_limit_leaves_no_descendant(tmp_path, mode):
    # Attack 6: `sleep 120 | cat` with a 2 s limit left sleep running under pid 1.
    iso = sandbox.choose(mode)
    mark, seconds = unique()
    [result] = await run_all(
        [Check("command", "hangs", f"sleep {seconds} | cat", timeout_seconds=1)],
        tmp_path,
        {**ENV, MARK: mark},
        iso,
    )
    assert result.message.startswith("timed out")
    assert alive_with(f"sleep {seconds}") == []


@pytest.mark.parametrize("mode", ISOLATIONS)
async def test_children_that_leave_the_group_and_tree_are_ended_with_the_run(tmp_path, mode):
    mark, seconds = unique()
    lengths = [f"{seconds}{k}" for k in range(3)]
    script = (
        f"setsid sleep {lengths[0]} & ( sleep {lengths[1]} & ) & sleep {lengths[2]} | cat & "
        "echo started"
    )
    result = await shell(
        tmp_path, script, mark, env={**ENV, MARK: mark}, isolation=sandbox.choose(mode)
    )
    assert result.exit_code == 0 and result.tail() == "started\n"
    assert [alive_with(f"sleep {n}") for n in lengths] == [[], [], []]


async def test_the_run_log_is_redacted_and_the_raw_output_removed(tmp_path):
    token = "ghp_" + "A1b2C3d4" * 5
    await shell(tmp_path, f"echo leaked {token}", "c-log")
    assert (tmp_path / "run.log").read_text() == "leaked [REDACTED]\n"
    assert list((tmp_path / "pids").iterdir()) == []

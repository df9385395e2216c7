"""Run cgroups: found where the host lets the daemon make them, and a pids limit that holds."""

from __future__ import annotations

import os
import select
import signal
import subprocess
from pathlib import Path

import pytest

from executive.workers.isolation import cgroup

HERE = cgroup.find(set_up=False)


@pytest.mark.skipif(HERE.hierarchy is None, reason=f"no run cgroup here: {HERE.reason}")
def test_a_run_cgroup_bounds_and_lists_every_process_started_in_it(tmp_path):
    assert HERE.hierarchy is not None
    group = HERE.hierarchy.new_run(12)
    errors = tmp_path / "errors"
    # The gate, as the daemon uses it: nothing runs before the shell is in the cgroup.
    script = "read -r go; n=0; while [ $n -lt 40 ]; do sleep 30 & n=$((n+1)); done"
    with errors.open("w") as sink:
        shell = subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE, stderr=sink)
    pinned = []
    try:
        group.add(shell.pid)
        assert shell.stdin is not None
        shell.stdin.write(b"go\n")
        shell.stdin.close()
        shell.wait(60)
        pinned = [os.pidfd_open(pid) for pid in group.pids()]
        assert 0 < len(pinned) <= 12 and "fork" in errors.read_text().lower()
    finally:
        for fd in pinned:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
            select.select([fd], [], [], 10)  # readable once it has exited
            os.close(fd)
    group.remove()
    assert not group.path.exists()


def _fake_v2(tmp_path: Path, procs: list[int]) -> tuple[Path, Path]:
    proc, root = tmp_path / "proc", tmp_path / "cg"
    proc.mkdir()
    (proc / "cgroup").write_text("0::/svc\n")
    (proc / "mountinfo").write_text(
        f"41 31 0:38 / {root} rw,relatime - cgroup2 cgroup2 rw\n"
        "22 1 0:20 / /proc rw - proc proc rw\n"
    )
    svc = root / "svc"
    svc.mkdir(parents=True)
    (svc / "cgroup.controllers").write_text("cpu memory pids\n")
    (svc / "cgroup.subtree_control").write_text("\n")
    (svc / "cgroup.procs").write_text("".join(f"{p}\n" for p in procs))
    return proc, svc


def test_cgroup_v2_the_daemon_moves_into_a_leaf_and_enables_pids_for_its_runs(tmp_path):
    proc, svc = _fake_v2(tmp_path, [4242])
    # doctor's view changes nothing
    looked = cgroup.find(proc, 4242, set_up=False)
    assert looked.hierarchy == cgroup.Hierarchy(2, svc.resolve())
    assert not (svc / cgroup.DAEMON_LEAF).exists()
    found = cgroup.find(proc, 4242)
    assert found.hierarchy == cgroup.Hierarchy(2, svc.resolve())
    assert (svc / cgroup.DAEMON_LEAF / "cgroup.procs").read_text() == "4242\n"
    assert (svc / "cgroup.subtree_control").read_text() == "+pids\n"


def test_cgroup_v2_shared_with_other_processes_or_without_pids_is_refused_with_why(tmp_path):
    proc, svc = _fake_v2(tmp_path, [4242, 17])
    found = cgroup.find(proc, 4242)
    assert found.hierarchy is None and "other processes" in found.reason
    assert not (svc / cgroup.DAEMON_LEAF).exists()
    (svc / "cgroup.controllers").write_text("cpu memory\n")
    assert "pids is not delegated" in cgroup.find(proc, 4242).reason


def test_a_pid_file_names_only_our_own_run_cgroups():
    assert cgroup.RunGroup.recorded("/sys/fs/cgroup/pids/executive-run-1-abc") is not None
    for bad in [
        None,
        "",
        7,
        "/sys/fs/cgroup/pids",
        "relative/executive-run-1",
        "/x/../executive-run-1",
    ]:
        assert cgroup.RunGroup.recorded(bad) is None, bad

"""Which limit each isolation mode sets, what doctor is told holds, and one that bites."""

from __future__ import annotations

import dataclasses
import os
import signal
from pathlib import Path

import anyio
import pytest

from executive.workers.isolation import limits, sandbox
from executive.workers.isolation.cgroup import Found, Hierarchy
from executive.workers.isolation.limits import Limits
from executive.workers.isolation.process import supervise
from executive.workers.output import LogFile

LIMITS = Limits(max_processes=64, file_max_bytes=2 * 1024 * 1024, log_max_bytes=4096)
NO_CGROUP = Found(None, "cgroup v1 pids: /sys/fs/cgroup/pids is not writable by the daemon")
CGROUP = Found(
    Hierarchy(1, Path("/sys/fs/cgroup/pids")), "cgroup v1 pids under /sys/fs/cgroup/pids"
)


def test_the_process_rlimit_is_set_only_where_it_binds_the_tree_alone():
    if limits.prlimit() is None:
        pytest.skip("prlimit is not installed")
    assert limits.prefix(LIMITS, "none")[1:] == ["--fsize=2097152", "--"]
    assert limits.prefix(LIMITS, "user")[1:] == ["--fsize=2097152", "--nproc=64", "--"]
    sandboxed = limits.prefix(LIMITS, "sandbox")[1:]
    # RLIMIT_NPROC never binds uid 0, and a root daemon's sandbox is uid 0.
    assert ("--nproc=64" in sandboxed) == (os.geteuid() != 0)
    assert limits.prefix(Limits(), "user") == []


def _holds(mode: str, cgroups: Found) -> dict[str, tuple[bool, str]]:
    return {h.limit: (h.holds, h.how) for h in limits.report(LIMITS, mode, cgroups)}


def test_the_report_says_which_limit_holds_and_how_or_why_not():
    assert _holds("none", CGROUP)["processes"] == (True, f"pids.max=64 ({CGROUP.reason})")
    holds, how = _holds("none", NO_CGROUP)["processes"]
    assert not holds and "daemon's own processes" in how and NO_CGROUP.reason in how
    if limits.prlimit() is not None:
        assert _holds("user", NO_CGROUP)["processes"] == (True, "RLIMIT_NPROC=64")
        assert _holds("none", NO_CGROUP)["file size"][0]
    if os.geteuid() == 0:
        holds, how = _holds("sandbox", NO_CGROUP)["processes"]
        assert not holds and "does not bind uid 0" in how
    assert not _holds("none", CGROUP)["output folder total"][0]
    assert "sandbox /tmp" not in _holds("none", CGROUP)


@pytest.mark.skipif(limits.prlimit() is None, reason="prlimit is not installed")
@pytest.mark.parametrize("mode", ["none", "sandbox"])
def test_a_write_past_the_file_limit_fails_in_every_mode(tmp_path, mode):
    if mode == "sandbox" and sandbox.choose("auto").mode != "sandbox":
        pytest.skip("bubblewrap cannot run here")
    iso = dataclasses.replace(sandbox.choose(mode), limits=LIMITS)
    log = tmp_path / "run.log"

    async def main() -> tuple[int | None, bool]:
        return await supervise(
            [
                "sh",
                "-c",
                "grep SigIgn /proc/self/status; head -c 10000000 /dev/zero > big.bin; echo exit=$?",
            ],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin"},
            timeout_seconds=60,
            sink=LogFile(log, LIMITS.log_max_bytes),
            isolation=iso,
        )

    assert anyio.run(main) == (0, False)
    assert (tmp_path / "big.bin").stat().st_size == LIMITS.file_max_bytes
    # The writer was ended by SIGXFSZ (128 + 25), which no one on the way left ignored
    # (Python, the sandbox's launcher, starts with it and SIGPIPE ignored).
    text = log.read_text()
    assert "exit=153" in text
    ignored = int(text.split("SigIgn:")[1].split()[0], 16)
    for signum in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (signum - 1)), signum

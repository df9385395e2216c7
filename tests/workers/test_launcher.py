"""The sandbox's launcher: its seccomp filter, and how it fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from executive.workers import launcher, sandbox

MACHINE = os.uname().machine
needs_filter = pytest.mark.skipif(
    MACHINE not in launcher.CONFINABLE, reason=f"no seccomp filter for {MACHINE}"
)


CONFINED = r"""
import json, os, socket, sys
from executive.workers import launcher

launcher.confine(os.uname().machine)
found = {}
for family in ("AF_UNIX", "AF_INET", "AF_INET6"):
    try:
        socket.socket(getattr(socket, family)).close()
        found[family] = "ok"
    except OSError as exc:
        found[family] = os.strerror(exc.errno)
socket.socketpair()
found["socketpair"] = "ok"
print(json.dumps(found))
"""


def _confined_child() -> dict[str, str]:
    """What a confined process may still open."""
    done = subprocess.run(
        [sys.executable, "-c", CONFINED], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@needs_filter
def test_the_filter_refuses_unix_sockets_and_nothing_else():
    assert _confined_child() == {
        "AF_UNIX": "Operation not permitted",
        "AF_INET": "ok",
        "AF_INET6": "ok",
        "socketpair": "ok",
    }


def test_every_known_machine_assembles_and_no_other():
    for machine in launcher.CONFINABLE:
        program = launcher.seccomp_filter(machine)
        assert len(program) % 8 == 0 and 0 < len(program) // 8 < 64
    with pytest.raises(KeyError):
        launcher.seccomp_filter("sparc64")


def test_a_missing_program_is_named_and_exits_127():
    spec = json.dumps({"forwards": [], "confine": False})
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", sandbox.LAUNCHER, spec, "/nonexistent/worker"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 127
    assert "cannot start /nonexistent/worker" in done.stderr


def test_the_limits_are_set_and_no_signal_stays_ignored_in_the_worker():
    shown = ["-h", "-e", "^SigIgn", "-e", "^Max file size", "-e", "^Max processes"]
    argv = sandbox.launch(
        sys.executable,
        ["grep", *shown, "/proc/self/limits", "/proc/self/status"],
        rlimits={"RLIMIT_FSIZE": 1 << 20, "RLIMIT_NPROC": 300},
        confine=False,
    )
    lines = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.splitlines()
    assert [line.split()[3:5] for line in lines if "file size" in line] == [["1048576"] * 2]
    assert [line.split()[2:4] for line in lines if "processes" in line] == [["300"] * 2]
    # The launcher is Python, which ignores SIGPIPE and SIGXFSZ; its worker must not (a
    # `yes | head` would spin, a write past RLIMIT_FSIZE would not stop the writer).
    assert [line.split()[1] for line in lines if "SigIgn" in line] == ["0" * 16]


def test_a_gated_worker_starts_only_on_the_daemons_byte():
    argv = sandbox.launch(sys.executable, ["sh", "-c", "echo started"], gate=True, confine=False)
    released = subprocess.run(argv, input=b"1", capture_output=True, check=False)
    assert (released.returncode, released.stdout) == (0, b"started\n")
    refused = subprocess.run(argv, input=b"", capture_output=True, check=False)
    assert (refused.returncode, refused.stdout) == (125, b"")

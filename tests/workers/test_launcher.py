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

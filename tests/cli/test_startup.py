"""The CLI and the daemon start light: what only one command or a dashboard needs loads there."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO, clean_env

HEAVY = (
    "executive.daemon.app",
    "executive.loop",
    "executive.dashboard",
    "executive.hooks.runner",
    "executive.surface",
    "executive.memory.runtime",
    "mem0",
    "onnxruntime",
    "numpy",
)


def test_importing_the_cli_loads_no_command_s_machinery():
    probe = "import json, sys, executive.cli; print(json.dumps(sorted(sys.modules)))"
    ran = subprocess.run(
        [sys.executable, "-c", probe],
        env=clean_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(ran.stdout)
    assert [m for m in loaded if m.startswith(HEAVY)] == []


def test_a_daemon_without_its_dashboard_never_loads_the_web_stack():
    probe = "import json, sys, executive.daemon.app; print(json.dumps(sorted(sys.modules)))"
    ran = subprocess.run(
        [sys.executable, "-c", probe],
        env=clean_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    web = ("executive.dashboard", "starlette", "hypercorn", "jinja2")
    assert [m for m in json.loads(ran.stdout) if m.startswith(web)] == []

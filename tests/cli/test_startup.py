"""The CLI and the daemon start light: what only one command or a dashboard needs loads there."""

from __future__ import annotations

from tests.conftest import loaded_by

HEAVY = (
    "executive.daemon.assembly",
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
    assert [m for m in loaded_by("executive.cli") if m.startswith(HEAVY)] == []


def test_a_daemon_without_its_dashboard_never_loads_the_web_stack():
    web = ("executive.dashboard", "starlette", "hypercorn", "jinja2")
    assert [m for m in loaded_by("executive.daemon.assembly") if m.startswith(web)] == []

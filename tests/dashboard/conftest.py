"""A real daemon serving its dashboard on a demo home, shared by the page tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import run_cli, set_env
from tests.daemonproc import Daemon
from tests.loop.homes import add_bundle

# Secrets the demo must never show: one from the process environment, one from the home's
# .env.executive. The failing bundle prints both, so they reach ledgers, state and memory:
# the test proves redaction, not the absence of an occasion to leak.
ENV_SECRET = "ghp-envsecret-0123456789abcdef"
FILE_SECRET = "m0-filesecret-abcdef0123456789"

FAILING = f"""echo "error: mirror refused credentials {ENV_SECRET} and {FILE_SECRET}" >&2
exit 1
"""


@dataclass
class Served:
    daemon: Daemon
    home: Path
    url: str

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        return httpx.get(self.url.rstrip("/") + path, timeout=60, **kwargs)  # type: ignore[arg-type]


def start(home: Path, env: dict[str, str] | None = None) -> Served:
    daemon = Daemon(
        home,
        {"EXECUTIVE_DASHBOARD": "true", "EXECUTIVE_DASHBOARD_BIND": "127.0.0.1:0", **(env or {})},
    )
    listening = daemon.wait_for("dashboard.listening")
    return Served(daemon, home, listening["urls"][0])


def stop(served: Served) -> None:
    import signal

    served.daemon.signal(signal.SIGTERM)
    try:
        assert served.daemon.wait(timeout=60) == 0
    finally:
        served.daemon.kill()


@pytest.fixture(scope="package")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The demo home after its work: three goals done, one blocked (Hook D ran), a retro."""
    home = tmp_path_factory.mktemp("dashboard") / "home"
    result = run_cli("init", "--demo", str(home))
    assert result.returncode == 0, result.stderr
    set_env(
        home,
        # Wide enough that a busy machine does not read as a stalled loop (window: 2 s).
        IDLE_SLEEP_SECONDS="1",
        EXECUTIVE_SHUTDOWN_GRACE_SECONDS="5",
        V3_MEM0_API_KEY=FILE_SECRET,
        MAX_RETRIES="3",
        # The failing bundle's retries need not wait: the fixture waits for it to block.
        EXECUTIVE_RETRY_BACKOFF_SECONDS="0",
        # Not the default, so the pages show it is read; slow enough that a page is not
        # swapped while a test reads it (test_overview asks one tab for ?refresh=1).
        EXECUTIVE_DASHBOARD_REFRESH_SECONDS="7",
    )
    add_bundle(home, "always-fails", FAILING, title="Mirror the vendor feed", priority="P4")
    served = start(home, {"GITHUB_TOKEN": ENV_SECRET})
    try:
        served.daemon.wait_for("goal.blocked", timeout=300)
        served.daemon.wait_for("hook.finished", timeout=300, hook="post-retro-harvest")
        yield served
    finally:
        stop(served)

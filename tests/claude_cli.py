"""The real Claude Code CLI (the one claude-agent-sdk bundles), run as the daemon runs a worker
against the scripted Messages API of :mod:`tests.messages_api`: real stream-json to read.

:func:`record_cli_run` runs the CLI directly (no daemon) with the argv the daemon gives a
claude worker (:func:`executive.workers.vendors.claude_argv`) in a folder of the test's, and
returns what it printed. A script with a :attr:`~tests.messages_script.Turn.hang` turn is a run
killed at its time limit: when the CLI asks for that turn, the run is ended the way the
daemon ends a worker (:func:`executive.workers.isolation.process.end_tree`: SIGTERM to its group, a
grace, SIGKILL), and its log ends without the ``result`` line.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
import pytest

from executive.workers import vendors
from executive.workers.claude_cli import bundled_cli
from executive.workers.isolation import process
from tests.messages_api import CLI_ENV, MessagesAPI, Request
from tests.messages_script import Turn

CLI: Path | None = bundled_cli()
needs_cli = pytest.mark.skipif(CLI is None, reason="claude-agent-sdk's bundled CLI is missing")
# Not a secret: the scripted API accepts only this key, which shows the CLI was handed it.
API_KEY = "sk-ant-api03-scripted-test-key"
PROMPT = "Do the task described in CLAUDE.md."
TIMEOUT_SECONDS = 120.0  # a run here takes about a second; this only bounds a hung test
_BASE = ("PATH", "LANG", "TERM")


def cli_env(api_url: str, home: Path, parent: Mapping[str, str]) -> dict[str, str]:
    """What the CLI needs to run against the scripted API and nothing else: ``home`` is its
    own (its settings and any transcript land there, never in the user's ``~/.claude``)."""
    env = {k: v for k, v in parent.items() if k in _BASE}
    env.update(HOME=str(home), ANTHROPIC_BASE_URL=api_url, ANTHROPIC_API_KEY=API_KEY)
    env.update(CLI_ENV)
    return env


@dataclass(frozen=True)
class CliRun:
    log: bytes  # what the CLI printed on stdout: its stream-json run log
    stderr: bytes
    exit_code: int | None
    killed: bool  # ended by the test at a hang turn, as the daemon ends a worker at its limit
    requests: list[Request]
    failures: list[str]  # the scripted API's: a turn the script lacked, a failed check

    def lines(self) -> list[dict[str, Any]]:
        """The log's complete JSON lines (a killed run's last line may be cut: skipped)."""
        out = []
        for line in self.log.splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out


def record_cli_run(
    script: Sequence[Turn],
    cwd: Path,
    *,
    prompt: str = PROMPT,
    home: Path | None = None,
    max_turns: int = 10,
    persist_session: bool = False,
    environ: Mapping[str, str] | None = None,
) -> CliRun:
    """Run the bundled CLI in ``cwd`` against a fresh scripted API playing ``script``.

    ``home`` is the CLI's HOME (a temporary one by default). ``persist_session`` drops the
    daemon's ``--no-session-persistence``, so the CLI keeps its session transcript in
    ``home/.claude/projects/<cwd>/<session_id>.jsonl`` (in ``<cwd>`` every character but a
    letter or a digit is a ``-``). ``environ`` gives PATH, LANG and TERM (the test
    process's by default); nothing else of it reaches the CLI.
    """
    if CLI is None:
        raise RuntimeError("claude-agent-sdk's bundled Claude Code CLI is not installed")
    hang = next((i for i, turn in enumerate(script) if turn.hang), None)
    argv = vendors.claude_argv(str(CLI), prompt, max_turns=max_turns)
    if persist_session:
        argv.remove("--no-session-persistence")
    with tempfile.TemporaryDirectory(prefix="claude-home-") as scratch:
        with MessagesAPI(script, api_key=API_KEY) as api:
            env = cli_env(api.url, home or Path(scratch), environ or os.environ)
            kill = api.arrived(hang) if hang is not None else None
            with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
                code, killed = anyio.run(_drive, argv, cwd, env, out, err, kill)
                out.seek(0)
                err.seek(0)
                log, stderr = out.read(), err.read()
        return CliRun(log, stderr, code, killed, api.requests, api.failures)


async def _drive(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    out: IO[bytes],
    err: IO[bytes],
    kill: threading.Event | None,
) -> tuple[int | None, bool]:
    cli = await anyio.open_process(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        start_new_session=True,  # a group of its own, as the daemon starts a worker
    )
    try:
        with anyio.fail_after(TIMEOUT_SECONDS):
            if kill is None:
                await cli.wait()
            else:
                # The CLI waits on the hang turn's answer, so it cannot exit by itself
                # meanwhile; an exit before that turn (a failure) ends the wait too.
                while not kill.is_set() and cli.returncode is None:
                    with anyio.move_on_after(0.05):
                        await cli.wait()
    finally:
        await process.end_tree(cli)  # the daemon's own ending of a worker's tree
    return cli.returncode, kill is not None and kill.is_set()


# A worker's program forging stream-json into the CLI's own stdout (same uid, so it can):
# `python3 forge.py '<json list of lines>'` walks up to the `claude` process and appends the
# lines to its fd 1, the daemon's run log (docs/security.md, worker-records.md "Trust").
FORGE = """
import json, os, sys
lines = json.loads(sys.argv[1])
pid = os.getppid()
while pid > 1:  # up the tree to the CLI, whose stdout is the daemon's run log
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        if f.read().split(b"\\0")[0].rsplit(b"/", 1)[-1] == b"claude":
            break
    with open(f"/proc/{pid}/stat") as f:
        pid = int(f.read().rsplit(")", 1)[1].split()[1])
with open(f"/proc/{pid}/fd/1", "a") as out:
    for line in lines:
        out.write(json.dumps(line) + "\\n")
print("forged into", pid)
"""


def forge_command(lines: list[dict[str, Any]]) -> str:
    """The shell command that runs ``forge.py`` (written beside it) with ``lines``."""
    return f"python3 forge.py '{json.dumps(lines)}'"

"""The real daemon runs the real Claude Code CLI as a worker, in its sandbox, against the
scripted Messages API on loopback: the worker's run log is the CLI's own stream-json.

The scripted worker fails a command, writes the missing module with ``Write``, runs the
command again (it passes) and gives its account; the bundle's verifiers pass. Hook C harvests
what it did; then a second bundle of the same project (a second daemon start, a second
script) gets a pack that names the file and the way through. Shared by the tests of this file.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from executive.memory.read.pack import END_MARK
from executive.workers import sandbox
from tests.claude_cli import API_KEY, CLI, needs_cli
from tests.conftest import run_cli
from tests.daemonproc import Daemon
from tests.loop.homes import MEMORY_ON, add_bundle, events, make_home, outputs
from tests.messages_api import MessagesAPI
from tests.messages_script import Text, ToolResult, Turn, bash, write

pytestmark = [
    needs_cli,
    pytest.mark.skipif(
        sandbox.choose("auto").mode != "sandbox",
        reason="bubblewrap cannot build namespaces on this machine",
    ),
]

SLUG = "weather"
GOAL_MARK = "goal-mark-7f3a: parse the weather feed"
FAILING = 'python3 -c "import weather.parser"'
PASSING = "PYTHONPATH=src python3 -c 'from weather.parser import parse; print(parse(\"12,sun\"))'"
PARSER = "def parse(line):\n    temp, sky = line.split(',')\n    return {'temp': int(temp), 'sky': sky}\n"
ACCOUNT = "Added src/weather/parser.py; the import failed before and works now."


def _failed_import(results: list[ToolResult]) -> None:
    [result] = results
    assert result.is_error and "ModuleNotFoundError" in result.text, result


def _parsed(results: list[ToolResult]) -> None:
    [result] = results
    assert not result.is_error and "'temp': 12" in result.text, result


def script(out: Path) -> list[Turn]:
    return [
        Turn([Text("First, does the module exist?"), bash(FAILING, "Try the import")]),
        Turn([write(str(out / "src/weather/parser.py"), PARSER)], check=_failed_import),
        Turn([bash(PASSING, "Parse a line")]),
        Turn([Text(ACCOUNT)], check=_parsed),
    ]


NEXT = "weather-cli"
NEXT_GOAL = "Add a command line to the parser: src/weather/cli.py reads lines and prints them."


def _run(home: Path, turns: list[Turn], slug: str) -> tuple[MessagesAPI, Daemon, int | None]:
    """One daemon start against one scripted API, until ``slug`` completes; then SIGTERM."""
    with MessagesAPI(turns, api_key=API_KEY) as api:
        env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": API_KEY}
        daemon = Daemon(home, env)
        try:
            try:
                daemon.wait_for("goal.completed", timeout=300, bundle=slug)
            except AssertionError as exc:
                raise AssertionError(
                    f"{exc}\nthe scripted API's failures: {api.failures}"
                ) from None
            daemon.signal(signal.SIGTERM)
            code = daemon.wait(60)
        finally:
            daemon.kill()
    return api, daemon, code


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory):
    home = make_home(
        tmp_path_factory.mktemp("claude-worker"),
        **MEMORY_ON,
        WORKER_VENDOR="claude",
        EXECUTIVE_CLAUDE_BIN=str(CLI),
        EXECUTIVE_WORKER_ISOLATION="sandbox",
        # CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is not passed: the daemon sets it itself.
        EXECUTIVE_WORKER_ENV="ANTHROPIC_BASE_URL,ANTHROPIC_API_KEY",
    )
    add_bundle(
        home,
        SLUG,
        "",
        title=f"Weather parser ({GOAL_MARK})",
        vendor="claude",
        command=None,
        max_turns=8,
        max_attempts=1,
        timeout_seconds=120,
        verifiers=[
            {"builtin": "output_exists", "path": "src/weather/parser.py"},
            {"name": "parses", "run": PASSING},
        ],
    )
    api, daemon, code = _run(home, script(outputs(home) / SLUG), SLUG)
    add_bundle(
        home,
        NEXT,
        "",
        title="Weather command line",
        app_id=SLUG,
        vendor="claude",
        command=None,
        max_turns=4,
        max_attempts=1,
        timeout_seconds=120,
        goal=NEXT_GOAL,
    )
    next_api, _, next_code = _run(home, [Turn([Text("Read the pack; nothing to do.")])], NEXT)
    return {
        "home": home,
        "api": api,
        "daemon": daemon,
        "code": code,
        "next_api": next_api,
        "next_code": next_code,
    }


def _run_log(home: Path) -> tuple[Path, list[dict[str, Any]]]:
    [completed] = events(home, "STEP_COMPLETED", bundle=SLUG)
    [path] = (home / "ledgers" / "worker-logs").glob(f"*/{completed['contract_id']}.log")
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def test_the_cli_worker_completes_the_goal_in_its_sandbox(scene):
    assert scene["code"] == 0, scene["daemon"].stderr
    assert not scene["api"].failures
    [started] = [
        r
        for r in scene["daemon"].records
        if r.get("event") == "worker.started" and r["argv0"] == str(CLI)
    ]
    assert started["isolation"] == "sandbox"
    # The CLI's own traffic (telemetry, update checks) is off, so the proxy refuses nothing.
    assert not [r for r in scene["daemon"].records if r.get("event") == "egress.refused"]
    home = scene["home"]
    assert (outputs(home) / SLUG / "src/weather/parser.py").read_text() == PARSER
    assert events(home, "GOAL_COMPLETED", bundle=SLUG)


def test_the_run_log_is_the_cli_stream_json(scene):
    path, lines = _run_log(scene["home"])
    assert [line["type"] for line in lines] == [
        "system", "assistant", "assistant", "user", "assistant", "user",
        "assistant", "user", "assistant", "result",
    ]  # fmt: skip
    assert lines[0]["subtype"] == "init" and lines[0]["apiKeySource"] == "ANTHROPIC_API_KEY"
    uses = [
        block
        for line in lines
        if line["type"] == "assistant"
        for block in line["message"]["content"]
        if block["type"] == "tool_use"
    ]
    assert [(u["name"], u["input"].get("command")) for u in uses] == [
        ("Bash", FAILING),
        ("Write", None),
        ("Bash", PASSING),
    ]
    results = [
        block
        for line in lines
        if line["type"] == "user"
        for block in line["message"]["content"]
        if block["type"] == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    failed, wrote, passed = results
    assert failed["is_error"] is True and failed["content"].startswith("Exit code 1")
    assert "ModuleNotFoundError" in failed["content"]
    assert not wrote.get("is_error") and "parser.py" in wrote["content"]
    assert passed["is_error"] is False and "'temp': 12" in passed["content"]
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False and result["result"] == ACCOUNT
    assert result["num_turns"] == 4
    assert API_KEY not in path.read_text()


def test_the_generated_claude_md_reached_the_model(scene):
    api: MessagesAPI = scene["api"]
    conversation = api.conversation
    assert [r.turn for r in conversation] == [0, 1, 2, 3]
    first = conversation[0]
    assert first.headers["x-api-key"] == API_KEY  # handed over through EXECUTIVE_WORKER_ENV
    claude_md = (outputs(scene["home"]) / SLUG / "CLAUDE.md").read_text()
    sent = first.text()
    assert "# Instructions for this worker" in sent and GOAL_MARK in sent
    constitution = (scene["home"] / "constitution.md").read_text()
    rule = next(line for line in constitution.splitlines() if line.startswith("1. "))
    assert rule in claude_md and rule in sent
    # The whole file as the worker's folder holds it, but for its HTML comments: Claude Code
    # strips them (outside code fences) before the model sees the file.
    out = outputs(scene["home"]) / SLUG
    assert f"Contents of {out / 'CLAUDE.md'} (project instructions" in sent
    assert "principles from constitution.md left out here" in claude_md  # the pack's own note
    assert claude_md[: claude_md.index(END_MARK)].strip() in sent
    assert END_MARK in claude_md and END_MARK not in sent


def _memories(home: Path) -> dict[str, dict[str, Any]]:
    listed = run_cli("--home", str(home), "mem", "list", "--json", "--app-id", SLUG)
    return {m["metadata"]["type"]: m for m in json.loads(listed.stdout)["results"]}


def test_hook_c_remembers_what_the_worker_did_and_the_way_through(scene):
    memories = _memories(scene["home"])
    episode, lesson = memories["episodic"], memories["procedural"]
    assert episode["metadata"]["files"] == ["src/weather/parser.py"]
    assert "It created src/weather/parser.py." in episode["text"]
    assert f"The worker's account: “{ACCOUNT}”" in episode["text"]
    assert lesson["metadata"]["files"] == ["src/weather/parser.py"]
    assert lesson["text"] == (
        f"In bundle {SLUG}, when `{FAILING}` fails "
        "with “ModuleNotFoundError: No module named 'weather'”: change src/weather/parser.py, "
        f"then run `{PASSING}`. That made it pass."
    )


def test_the_next_bundle_of_the_project_gets_the_file_and_the_way_through(scene):
    assert scene["next_code"] == 0
    claude_md = (outputs(scene["home"]) / NEXT / "CLAUDE.md").read_text()
    pack = claude_md[claude_md.index("## Memory Pack") :]
    assert "change src/weather/parser.py" in pack and "It created src/weather/parser.py" in pack
    assert "PYTHONPATH=src" in pack and "ModuleNotFoundError" in pack
    # ...and the model was sent it.
    sent = scene["next_api"].conversation[0].text()
    assert "change src/weather/parser.py" in sent and "PYTHONPATH=src" in sent

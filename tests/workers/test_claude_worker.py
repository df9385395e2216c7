"""The real daemon runs the real Claude Code CLI as a worker, in its sandbox, against the
scripted Messages API on loopback: the worker's run log is the CLI's own stream-json.

The scripted worker writes a test, runs the suite with its output saved and shown
(``... > out.txt 2>&1; cat out.txt``: the chain exits as ``cat`` does), which fails with a
``ModuleNotFoundError``, writes the missing module with ``Write``, runs the suite again with
``PYTHONPATH=src`` (it passes) and gives its account; the bundle's verifiers pass. Hook C
harvests a card and the lesson naming the error and the way through; then a second bundle of
the same project (a second daemon start, a second script) gets a pack that names the file and
the way through. Shared by the tests of this file.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from executive.memory.read.pack import END_MARK
from executive.workers.isolation import sandbox
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
SUITE = "python3 -m unittest discover -s tests"
FAILING = f"{SUITE} > out.txt 2>&1; cat out.txt"
PASSING = f"PYTHONPATH=src {SUITE} > out.txt 2>&1; cat out.txt"
PARSES = "PYTHONPATH=src python3 -c 'from weather.parser import parse; print(parse(\"12,sun\"))'"
PARSER = "def parse(line):\n    temp, sky = line.split(',')\n    return {'temp': int(temp), 'sky': sky}\n"
TEST = (
    "import unittest\n\nfrom weather.parser import parse\n\n\n"
    "class ParseTest(unittest.TestCase):\n    def test_parse(self):\n"
    "        self.assertEqual(parse('12,sun'), {'temp': 12, 'sky': 'sun'})\n"
)
ACCOUNT = (
    "The tests could not import weather: the module was missing. Added src/weather/parser.py; "
    "the suite passes with PYTHONPATH=src."
)


def _failed_import(results: list[ToolResult]) -> None:
    [result] = results  # the chain exits as cat does: only its output says it failed
    assert not result.is_error and "ModuleNotFoundError" in result.text, result


def _passed(results: list[ToolResult]) -> None:
    [result] = results
    assert not result.is_error and "OK" in result.text, result


def script(out: Path) -> list[Turn]:
    return [
        Turn([Text("A test first."), write(str(out / "tests/test_parser.py"), TEST)]),
        Turn([bash(FAILING, "Run the suite")]),
        Turn([write(str(out / "src/weather/parser.py"), PARSER)], check=_failed_import),
        Turn([bash(PASSING, "Run the suite with src on the path")]),
        Turn([Text(ACCOUNT)], check=_passed),
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
            {"name": "parses", "run": PARSES},
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
    # The log is the CLI's stdout and stderr on one pipe: a blank line it prints between
    # (seen once on a busy machine) is not a record line; any other line must be JSON.
    text = path.read_text()
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        return path, [json.loads(line) for line in lines]
    except ValueError as exc:
        raise AssertionError(f"a run log line is not JSON ({exc}):\n{text[-4000:]}") from None


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
        "assistant", "user", "assistant", "user", "assistant", "result",
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
        ("Write", None),
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
    _, failed, wrote, passed = results
    assert failed["is_error"] is False and "ModuleNotFoundError" in failed["content"]
    assert not wrote.get("is_error") and "parser.py" in wrote["content"]
    assert passed["is_error"] is False and "OK" in passed["content"]
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False and result["result"] == ACCOUNT
    assert result["num_turns"] == 5
    assert API_KEY not in path.read_text()


def test_the_generated_claude_md_reached_the_model(scene):
    api: MessagesAPI = scene["api"]
    conversation = api.conversation
    assert [r.turn for r in conversation] == [0, 1, 2, 3, 4]
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
    card, lesson = memories["episodic"], memories["procedural"]
    # What the daemon saw (its own walk of the folder, its verifiers), then the report.
    assert card["metadata"]["files"] == ["out.txt", "src/weather/parser.py", "tests/test_parser.py"]
    assert card["metadata"]["observed"] == ["verifiers", "files"]
    assert card["text"] == (
        f"Weather parser ({GOAL_MARK}).\n"
        "Seen: changed out.txt, src/weather/parser.py, tests/test_parser.py; verifiers passed "
        "(output_exists:src/weather/parser.py, parses).\n"
        f"The worker's report: {ACCOUNT} Edited parse. "
        "Tests: `PYTHONPATH=src python3 -m unittest discover -s tests` (1 tests: OK)."
    )
    # The lesson names the error and the way through, each command as it reads alone.
    assert lesson["metadata"]["files"] == ["src/weather/parser.py"]
    assert lesson["text"] == (
        f"The worker reported: `{SUITE}` failed with “ModuleNotFoundError: No module named "
        f"'weather'”; changing src/weather/parser.py, then `PYTHONPATH=src {SUITE}` passed."
    )


def test_the_next_bundle_of_the_project_gets_the_file_and_the_way_through(scene):
    assert scene["next_code"] == 0
    claude_md = (outputs(scene["home"]) / NEXT / "CLAUDE.md").read_text()
    pack = claude_md[claude_md.index("## Memory Pack") :]
    assert (
        "changing src/weather/parser.py" in pack
        and "Seen: changed out.txt, src/weather/parser.py" in pack
    )
    assert "PYTHONPATH=src" in pack and "ModuleNotFoundError" in pack
    # ...and the model was sent it.
    sent = scene["next_api"].conversation[0].text()
    assert "changing src/weather/parser.py" in sent and "PYTHONPATH=src" in sent

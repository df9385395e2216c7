"""Real stream-json from the bundled Claude Code CLI, recorded without a daemon: a full run (with
its session transcript), a run killed while it waits on the model, a run the API fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.claude_cli import API_KEY, CliRun, needs_cli, record_cli_run
from tests.messages_script import Text, ToolResult, Turn, bash, edit, write

pytestmark = needs_cli

# The same command, then with src on the path: what a fix is made of (two different
# ``python -c`` programs would be two commands, never a failure and its fix).
FAILING = "python3 -c 'import weather.parser as p; print(p.parse(\"9,rain\"))'"
PASSING = f"PYTHONPATH=src {FAILING}"
ACCOUNT = "Wrote src/weather/parser.py and fixed its split; the import works."


def _failed(results: list[ToolResult]) -> None:
    [result] = results
    assert result.is_error and result.text.startswith("Exit code 1"), result


def _blocks(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        block
        for line in lines
        if line.get("type") in ("assistant", "user")
        and isinstance(line["message"].get("content"), list)
        for block in line["message"]["content"]
        if block["type"] == kind
    ]


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    cwd, home = tmp_path_factory.mktemp("work"), tmp_path_factory.mktemp("cli-home")
    parser = str(cwd / "src/weather/parser.py")
    script = [
        Turn([Text("Checking the module."), bash(FAILING, "Try the import")]),
        Turn([write(parser, "def parse(s):\n    return s.split(';')\n")], check=_failed),
        Turn([edit(parser, "split(';')", "split(',')")]),
        Turn([bash(PASSING, "Parse a line")]),
        Turn([Text(ACCOUNT)]),
    ]
    return record_cli_run(script, cwd, home=home, persist_session=True), home


def test_a_full_run_logs_each_tool_call_its_result_and_the_result_line(full):
    run, _ = full
    assert run.exit_code == 0 and not run.killed and not run.failures, run.stderr
    lines = run.lines()
    assert [line["type"] for line in lines] == [
        "system", "assistant", "assistant", "user", "assistant", "user",
        "assistant", "user", "assistant", "user", "assistant", "result",
    ]  # fmt: skip
    assert [u["name"] for u in _blocks(lines, "tool_use")] == ["Bash", "Write", "Edit", "Bash"]
    failed, wrote, edited, passed = _blocks(lines, "tool_result")
    assert failed["is_error"] is True and "ModuleNotFoundError" in failed["content"]
    assert not wrote.get("is_error") and not edited.get("is_error")
    assert passed["is_error"] is False and "['9', 'rain']" in passed["content"]
    result = lines[-1]
    assert (result["subtype"], result["is_error"], result["result"]) == ("success", False, ACCOUNT)
    assert API_KEY not in run.log.decode()


def test_the_session_transcript_holds_the_same_blocks(full):
    run, home = full
    session = run.lines()[0]["session_id"]
    [transcript] = (home / ".claude" / "projects").glob(f"*/{session}.jsonl")
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert {"user", "assistant"} <= {line["type"] for line in lines}
    assert {line["sessionId"] for line in lines if line["type"] in ("user", "assistant")} == {
        session
    }
    for kind in ("tool_use", "tool_result"):
        assert _blocks(lines, kind) == _blocks(run.lines(), kind)
    assert API_KEY not in transcript.read_text()


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    script = [Turn([bash("echo started; exit 3", "Start")]), Turn(hang=True)]
    return record_cli_run(script, tmp_path_factory.mktemp("work"))


def test_a_run_killed_at_its_limit_ends_without_the_result_line(killed):
    assert killed.killed and killed.exit_code != 0 and not killed.failures
    lines = killed.lines()
    assert len(lines) == len(killed.log.splitlines())  # what was written, whole lines
    assert "result" not in {line["type"] for line in lines}
    # It was killed waiting on the model, after the command's result was logged.
    [result] = _blocks(lines, "tool_result")
    assert result["is_error"] is True and result["content"] == "Exit code 3\nstarted"


def test_a_failed_api_call_ends_the_run_with_an_error_result(tmp_path: Path):
    def refuse(results: list[ToolResult]) -> None:
        raise AssertionError("no second turn")

    run = record_cli_run([Turn([bash("true")]), Turn([Text("-")], check=refuse)], tmp_path)
    assert run.failures and all("no second turn" in f for f in run.failures)
    result = run.lines()[-1]
    assert run.exit_code == 1 and result["type"] == "result" and result["is_error"] is True
    assert result["result"].startswith("API Error: 400") and "no second turn" in result["result"]


# --- the experience digest of these real records ------------------------------------------------
def _digest(log: bytes, cwd: Path):
    from executive.workers.record import runlog
    from executive.workers.record.digest import digest
    from executive.workers.record.experience import within

    return digest(runlog.read_lines(log.splitlines(keepends=True)), relative=within(str(cwd)))


def test_the_digest_of_a_real_run_names_the_file_the_failure_and_the_way_through(full):
    run, _ = full
    cwd = Path(run.lines()[0]["cwd"])
    found = _digest(run.log, cwd)
    assert found.complete and found.source == "stream-json"
    assert [(f.path, f.change) for f in found.files] == [("src/weather/parser.py", "created")]
    [fix] = found.fixes
    assert (fix.failed, fix.error, fix.files, fix.then) == (
        FAILING,
        "ModuleNotFoundError: No module named 'weather'",
        ["src/weather/parser.py"],
        PASSING,
    )
    assert found.summary == ACCOUNT


def test_the_digest_of_a_real_transcript_matches_its_stream_json(full):
    run, home = full
    session = run.lines()[0]["session_id"]
    [transcript] = (home / ".claude" / "projects").glob(f"*/{session}.jsonl")
    cwd = Path(run.lines()[0]["cwd"])
    from_transcript = _digest(transcript.read_bytes(), cwd)
    from_stream = _digest(run.log, cwd)
    assert from_transcript.source == "transcript"
    assert (from_transcript.files, from_transcript.fixes, from_transcript.commands) == (
        from_stream.files,
        from_stream.fixes,
        from_stream.commands,
    )


def test_the_digest_of_a_killed_run_and_of_a_cut_line_is_partial_and_says_so(killed):
    cwd = Path(killed.lines()[0]["cwd"])
    found = _digest(killed.log, cwd)
    assert not found.complete and any("cut short" in note for note in found.notes)
    [command] = found.commands
    assert (command.command, command.exit_code, command.failed) == ("echo started; exit 3", 3, True)
    # Killed in the middle of a line (as a full disk or a SIGKILL leaves it): still no error.
    cut = _digest(killed.log[: len(killed.log) - 40], cwd)
    assert not cut.complete and any("not JSON" in note for note in cut.notes)

"""Claude Code records written by hand, line for line as the CLI prints them (the team's
worker-records notes): for the digest's edge cases. Real CLI output is in
``test_claude_worker.py``."""

from __future__ import annotations

import json
from typing import Any


def line(**fields: Any) -> bytes:
    return json.dumps(fields).encode() + b"\n"


def init(cwd: str) -> bytes:
    return line(type="system", subtype="init", cwd=cwd, session_id="s-1", tools=["Bash"])


def call(tool_id: str, name: str, **tool_input: Any) -> bytes:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
    return line(type="assistant", message={"role": "assistant", "content": [block]})


def result(tool_id: str, text: str, *, exit_code: int | None = None) -> bytes:
    """A tool's result; a failed Bash call reports ``Exit code N`` first, as the CLI does."""
    failed = exit_code not in (None, 0)
    content = f"Exit code {exit_code}\n{text}" if failed else text
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": failed}
    return line(
        type="user",
        message={"role": "user", "content": [block]},
        tool_use_result={"stdout": text, "stderr": "", "interrupted": False},
    )


def said(text: str) -> bytes:
    return line(
        type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": text}]}
    )


def done(text: str, *, error: bool = False) -> bytes:
    return line(
        type="result",
        subtype="error_during_execution" if error else "success",
        is_error=error,
        result=text,
        num_turns=4,
    )


def fixed_run(cwd: str) -> list[bytes]:
    """A run that fails a test command, writes the missing module, then passes."""
    return [
        init(cwd),
        call("t1", "Bash", command="python -m pytest -q"),
        result(
            "t1",
            "pyenv: cannot rehash: /root/.pyenv/shims isn't writable\n"
            "E   ModuleNotFoundError: No module named 'weather'\n1 error in 0.04s",
            exit_code=1,
        ),
        call("t2", "Write", file_path=f"{cwd}/src/weather/parser.py", content="def parse(): ...\n"),
        result("t2", f"File created successfully at: {cwd}/src/weather/parser.py"),
        call("t3", "Bash", command="PYTHONPATH=src python -m pytest -q"),
        result("t3", "..\n2 passed in 0.01s"),
        said("I wrote src/weather/parser.py; the tests pass with PYTHONPATH=src."),
        done("I wrote src/weather/parser.py; the tests pass with PYTHONPATH=src."),
    ]

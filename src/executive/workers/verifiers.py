"""Verifiers: did the worker do what the goal asked? Each gives verifier, result, message, evidence.

Commands run in the worker's output folder with the worker's environment (never the
daemon's), exit code 0 meaning PASS; their output is kept as evidence.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import anyio

EVIDENCE_CHARS = 2000
# Files the executive itself puts in the output folder: not the worker's doing.
OWN_FILES = ("CLAUDE.md", ".executive/")


@dataclass(frozen=True)
class Check:
    kind: Literal["command", "output_exists", "git_status_clean"]
    label: str
    argument: str = ""
    timeout_seconds: float = 120.0


@dataclass(frozen=True)
class VerifierResult:
    verifier: str
    result: Literal["PASS", "FAIL"]
    message: str
    evidence: str = ""

    @property
    def passed(self) -> bool:
        return self.result == "PASS"

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


async def run_all(checks: list[Check], cwd: Path, env: Mapping[str, str]) -> list[VerifierResult]:
    return [await run_one(check, cwd, env) for check in checks]


async def run_one(check: Check, cwd: Path, env: Mapping[str, str]) -> VerifierResult:
    if check.kind == "output_exists":
        return output_exists(check.label, cwd, check.argument)
    if check.kind == "git_status_clean":
        return await git_status_clean(check.label, cwd, env)
    return await command(check.label, check.argument, cwd, env, check.timeout_seconds)


def output_exists(label: str, cwd: Path, relative: str) -> VerifierResult:
    target = (cwd / relative).resolve()
    if not target.is_relative_to(cwd.resolve()):
        return VerifierResult(label, "FAIL", f"{relative} points outside the output folder")
    if not target.exists():
        return VerifierResult(label, "FAIL", f"{relative} does not exist in the output folder")
    if target.is_file() and target.stat().st_size == 0:
        return VerifierResult(label, "FAIL", f"{relative} is empty")
    return VerifierResult(label, "PASS", f"{relative} exists")


async def git_status_clean(label: str, cwd: Path, env: Mapping[str, str]) -> VerifierResult:
    proc = await anyio.run_process(
        ["git", "status", "--porcelain"], cwd=cwd, env=dict(env), check=False
    )
    if proc.returncode != 0:
        return VerifierResult(
            label,
            "FAIL",
            "not a git repository",
            proc.stderr.decode(errors="replace")[-EVIDENCE_CHARS:],
        )
    dirty = [
        line
        for line in proc.stdout.decode(errors="replace").splitlines()
        if not any(line[3:].startswith(own) for own in OWN_FILES)
    ]
    if dirty:
        return VerifierResult(
            label, "FAIL", f"{len(dirty)} uncommitted change(s)", "\n".join(dirty)[-EVIDENCE_CHARS:]
        )
    return VerifierResult(label, "PASS", "working tree clean")


async def command(
    label: str, run: str, cwd: Path, env: Mapping[str, str], limit: float
) -> VerifierResult:
    with anyio.move_on_after(limit) as scope:
        proc = await anyio.run_process(
            ["sh", "-c", run], cwd=cwd, env=dict(env), check=False, stderr=subprocess.STDOUT
        )
    if scope.cancelled_caught:
        return VerifierResult(label, "FAIL", f"timed out after {limit:g}s")
    output = proc.stdout.decode(errors="replace")[-EVIDENCE_CHARS:]
    if proc.returncode == 0:
        return VerifierResult(label, "PASS", "exit 0", output)
    return VerifierResult(label, "FAIL", f"exit {proc.returncode}", output)

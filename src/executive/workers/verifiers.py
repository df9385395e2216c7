"""Verifiers: did the worker do what the goal asked? Each gives verifier, result, message, evidence.

Commands run in the worker's output folder with the worker's environment (never the
daemon's) and in the worker's isolation, in their own process group that is killed whole at
the time limit; exit code 0 means PASS; their output, redacted, is kept as evidence.
"""

from __future__ import annotations

import stat
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from executive.files import UnsafeFile, lstat_in
from executive.workers import output
from executive.workers.isolation import NOT_ISOLATED, Isolation, supervise

EVIDENCE_CHARS = 2000
CAPTURE_BYTES = 64 * 1024
GIT_TIMEOUT_SECONDS = 60.0
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


async def run_all(
    checks: list[Check],
    cwd: Path,
    env: Mapping[str, str],
    isolation: Isolation | None = None,
    readonly: Sequence[Path] = (),
) -> list[VerifierResult]:
    results = []
    for check in checks:
        if check.kind == "output_exists":
            results.append(output_exists(check.label, cwd, check.argument))
        elif check.kind == "git_status_clean":
            results.append(await git_status_clean(check.label, cwd, env, isolation))
        else:
            limit = check.timeout_seconds
            ran = await command(check.label, check.argument, cwd, env, limit, isolation, readonly)
            results.append(ran)
    return results


def output_exists(label: str, cwd: Path, relative: str) -> VerifierResult:
    # Walked without following links: a planted symlink must not pass for output, nor
    # tell us whether a file outside the folder exists.
    try:
        info = lstat_in(cwd, relative)
    except UnsafeFile as exc:
        return VerifierResult(label, "FAIL", f"{relative} points outside the output folder: {exc}")
    except OSError as exc:
        return VerifierResult(label, "FAIL", f"{relative} cannot be checked: {exc.strerror}")
    if info is None:
        return VerifierResult(label, "FAIL", f"{relative} does not exist in the output folder")
    if stat.S_ISLNK(info.st_mode):
        return VerifierResult(label, "FAIL", f"{relative} is a symbolic link, not output")
    if stat.S_ISREG(info.st_mode) and info.st_size == 0:
        return VerifierResult(label, "FAIL", f"{relative} is empty")
    return VerifierResult(label, "PASS", f"{relative} exists")


async def git_status_clean(
    label: str, cwd: Path, env: Mapping[str, str], isolation: Isolation | None = None
) -> VerifierResult:
    # The repository is the worker's: its config can name programs (core.fsmonitor), so
    # git runs in the worker's isolation, never as the bare daemon.
    code, timed_out, output = await _capture(
        ["git", "status", "--porcelain"], cwd, env, GIT_TIMEOUT_SECONDS, isolation, ()
    )
    if timed_out:
        return VerifierResult(label, "FAIL", f"git status timed out after {GIT_TIMEOUT_SECONDS:g}s")
    if code != 0:
        return VerifierResult(label, "FAIL", "not a git repository", output[-EVIDENCE_CHARS:])
    dirty = [
        line
        for line in output.splitlines()
        if not any(line[3:].startswith(own) for own in OWN_FILES)
    ]
    if dirty:
        return VerifierResult(
            label, "FAIL", f"{len(dirty)} uncommitted change(s)", "\n".join(dirty)[-EVIDENCE_CHARS:]
        )
    return VerifierResult(label, "PASS", "working tree clean")


async def command(
    label: str,
    run: str,
    cwd: Path,
    env: Mapping[str, str],
    limit: float,
    isolation: Isolation | None = None,
    readonly: Sequence[Path] = (),
) -> VerifierResult:
    code, timed_out, output = await _capture(
        ["sh", "-c", run], cwd, env, limit, isolation, readonly
    )
    evidence = output[-EVIDENCE_CHARS:]
    if timed_out:
        return VerifierResult(label, "FAIL", f"timed out after {limit:g}s", evidence)
    return VerifierResult(label, "PASS" if code == 0 else "FAIL", f"exit {code}", evidence)


async def _capture(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    limit: float,
    isolation: Isolation | None,
    readonly: Sequence[Path],
) -> tuple[int | None, bool, str]:
    """(exit code, timed out, the end of its output): stderr joins stdout (evidence shows
    both), redacted as it streams and capped as a worker's log is."""
    iso = isolation or NOT_ISOLATED
    tail = output.Tail(CAPTURE_BYTES, iso.limits.log_max_bytes)
    code, timed_out = await supervise(
        argv,
        cwd=cwd,
        env=env,
        timeout_seconds=limit,
        sink=tail,
        isolation=isolation,
        readonly=readonly,
        label=f"verifier:{argv[0]}",
    )
    return code, timed_out, tail.text()

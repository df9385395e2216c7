"""A finished attempt's experience: what the worker did, as the daemon keeps it.

The loop keeps that a run happened (its outcome, its verifiers); this keeps what can be
learned from it: the files it changed, the functions and classes its edits touched, its
commands with their status and each failure's tail, its failure→fix pairs, its tests and its
closing account. Hooks C, D and E read memories out of it.

What the daemon saw itself and what the worker's record claims are kept apart
(``observed``): the files come from the daemon's own walk of the folder when it could take
one; everything else is the worker's text, so untrusted: each string is cleaned and redacted
before it is cut to its limit, every list is bounded, and a malformed or truncated record
gives a partial digest that says so (``complete``, ``notes``), never an exception.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from executive import relpath

MAX_FILES = 40
MAX_COMMANDS = 24
MAX_FIXES = 5
MAX_TESTS = 10
MAX_NOTES = 8
MAX_SYMBOLS = 12
PATH_CHARS = relpath.MAX_CHARS
COMMAND_CHARS = 240
ERROR_CHARS = 200
TAIL_CHARS = 400
SUMMARY_CHARS = 1500
SYMBOL_CHARS = 120
SHOWN_PATHS = 8
ACROSS = "the previous attempt"  # a fix's ``failed`` when it spans attempts
# What tools and runtimes leave behind in a folder: never what a run is about.
_NOISE_PARTS = frozenset(
    [
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "node_modules",
        ".git",
        ".executive",
        ".cache",
        ".hypothesis",
    ]
)
_NOISE_SUFFIXES = (".pyc", ".pyo")
# A script a run writes for itself at the top of its folder (``test_issue.py``,
# ``reproduce.py``), or a folder of them (``test_bug/conf.py``): scratch, not the project.
_SCRATCH_FILE = re.compile(
    r"(?:test|tests|reproduce|repro|debug|check|verify|validate|demo|scratch|tmp|temp|try|"
    r"final|simple|standalone|comprehensive|example|run)(?:[_-][\w-]*)?\.\w+"
)
_SCRATCH_FOLDER = re.compile(r"(?:test|reproduce|repro|debug|scratch|tmp|temp|try)(?:[_-][\w-]+)?")

Path = Annotated[str, Field(min_length=1, max_length=PATH_CHARS)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileChange(_Model):
    path: Path
    change: Literal["created", "modified", "deleted"]


class Symbol(_Model):
    """A function or class an edit touched (``Mixin.get_response``), in the file it is in."""

    path: Path
    name: Annotated[str, Field(min_length=1, max_length=SYMBOL_CHARS)]


class Command(_Model):
    command: Annotated[str, Field(max_length=COMMAND_CHARS)]
    exit_code: int | None = None
    failed: bool = False
    error: Annotated[str, Field(max_length=ERROR_CHARS)] = ""  # the line naming the failure
    tail: Annotated[str, Field(max_length=TAIL_CHARS)] = ""  # its output's end, failures only


class Fix(_Model):
    """A failure, then what made it pass: the files changed between, the run of the same
    command (or what the passing attempt ran) that passed."""

    failed: Annotated[str, Field(max_length=COMMAND_CHARS)]
    error: Annotated[str, Field(max_length=ERROR_CHARS)] = ""
    files: Annotated[list[Path], Field(max_length=MAX_FILES)] = []
    then: Annotated[str, Field(max_length=COMMAND_CHARS)] = ""

    def way(self) -> str:
        """What made it pass: ``changing a.py, then `PYTHONPATH=src pytest```."""
        steps = [f"changing {listed(self.files)}"] if self.files else []
        if self.then:
            steps.append(f"`{self.then}`")
        return ", then ".join(steps)

    def lesson(self) -> str:
        """The fix as the worker's report, one line, with no run's particulars: the same
        lesson from another run is the same memory."""
        error = f" with “{self.error}”" if self.error else ""
        if self.failed == ACROSS:
            return f"The worker reported: after a failed attempt{error}, {self.way()} passed."
        passed = "passed" if self.then else "then passed"
        return f"The worker reported: `{self.failed}` failed{error}; {self.way()} {passed}."


class TestRun(_Model):
    command: Annotated[str, Field(max_length=COMMAND_CHARS)]
    passed: bool
    counts: Annotated[str, Field(max_length=ERROR_CHARS)] = ""
    own: bool = True  # the project's test command, not a script the run wrote for itself


class Experience(_Model):
    source: Literal["stream-json", "transcript", "command", "none"]
    files: Annotated[list[FileChange], Field(max_length=MAX_FILES)] = []
    # The files are the daemon's own before/after walk of the folder (else the record's edits).
    observed: bool = False
    symbols: Annotated[list[Symbol], Field(max_length=MAX_SYMBOLS)] = []
    commands: Annotated[list[Command], Field(max_length=MAX_COMMANDS)] = []
    fixes: Annotated[list[Fix], Field(max_length=MAX_FIXES)] = []
    tests: Annotated[list[TestRun], Field(max_length=MAX_TESTS)] = []
    # The first failure a test run named (an exception, not the harness): the run's symptom.
    symptom: Annotated[str, Field(max_length=ERROR_CHARS)] = ""
    summary: Annotated[str, Field(max_length=SUMMARY_CHARS)] = ""
    complete: bool = True  # the record ended as a finished run's does and every line was read
    notes: Annotated[list[Annotated[str, Field(max_length=300)]], Field(max_length=MAX_NOTES)] = []

    @property
    def changed(self) -> list[str]:
        """The paths it created or changed (not those it deleted), in the digest's order."""
        return [f.path for f in self.files if f.change != "deleted"]

    @property
    def project_files(self) -> list[str]:
        """What it changed of the project: its scratch files left out."""
        return [f.path for f in self.files if f.change != "deleted" and not scratch(f)]

    @property
    def empty(self) -> bool:
        return not (self.files or self.commands or self.summary)


def listed(paths: Sequence[str], shown: int = SHOWN_PATHS) -> str:
    """``a.py, b.py and 3 more``."""
    more = len(paths) - shown
    return ", ".join(paths[:shown]) + (f" and {more} more" if more > 0 else "")


def scratch(change: FileChange) -> bool:
    """Whether a file is one the run wrote for itself (a script at the top of its folder,
    named for a test or a reproduction, or in a folder of them), not a file of the project.
    A file the run only changed was there before: always the project's."""
    if change.change != "created":
        return False
    top, _, rest = change.path.partition("/")
    return scratch_name(top) if not rest else bool(_SCRATCH_FOLDER.fullmatch(top))


def scratch_name(name: str) -> bool:
    """Whether a file's name is a scratch script's (``test_issue.py``, ``reproduce.py``)."""
    return bool(_SCRATCH_FILE.fullmatch(name))


# --- paths -------------------------------------------------------------------------------------
def within(workdir: str | None) -> Callable[[str], str | None]:
    """Paths as the digest keeps them: relative to ``workdir``; None for one outside it."""
    root = posixpath.normpath(workdir) if workdir else None

    def relative(raw: str) -> str | None:
        path = raw.strip()
        if root is not None and posixpath.isabs(path):
            path = posixpath.relpath(posixpath.normpath(path), root)
        return normal_path(path)

    return relative


def normal_path(path: str) -> str | None:
    """A relative path in its plain form, or None: absolute, escaping, unprintable or noise."""
    flat = relpath.normal(path)
    if flat is None or _NOISE_PARTS.intersection(flat.split("/")):
        return None
    return None if flat.endswith(_NOISE_SUFFIXES) else flat


def bounded_files(changes: Sequence[FileChange]) -> tuple[list[FileChange], int]:
    """Created first, then changed, then deleted; each by path; at most ``MAX_FILES``."""
    order = {"created": 0, "modified": 1, "deleted": 2}
    unique = {c.path: c for c in changes}
    ranked = sorted(unique.values(), key=lambda c: (order[c.change], c.path))
    return ranked[:MAX_FILES], max(0, len(ranked) - MAX_FILES)


BRIEF_FILES = 10
BRIEF_SUMMARY = 400


def brief(experience: Experience | None) -> dict[str, object] | None:
    """The digest as the work ledger keeps it with the step's outcome: its failed commands
    (no tails), fixes, last tests and the start of the account; enough for Hook D to say
    what earlier attempts tried and for a retrospective to gather what a week taught."""
    if experience is None or experience.empty:
        return None
    short = experience.model_copy(
        update={
            "files": experience.files[:BRIEF_FILES],
            "symbols": experience.symbols[:BRIEF_FILES],
            "commands": [
                c.model_copy(update={"tail": ""}) for c in experience.commands if c.failed
            ][-3:],
            "fixes": experience.fixes[-3:],
            "tests": experience.tests[-2:],
            "summary": experience.summary[:BRIEF_SUMMARY],
            "notes": experience.notes[:2],
        }
    )
    return short.model_dump(mode="json", exclude_defaults=True)

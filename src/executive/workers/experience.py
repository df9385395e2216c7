"""A finished attempt's experience: what the worker did, read from its own record.

The loop keeps that a run happened (its outcome, its verifiers); this keeps what it did and
so what can be learned from it: the files it created, changed or deleted (relative to its
folder), the commands it ran with their status and a short tail of each failure, the
failure→fix pairs its record shows (a command that failed, then the change and the command
that made it pass), the tests it ran, and its own closing account. Hooks C, D and E read
memories out of it.

Everything in a digest is the worker's text and so untrusted: each string is cleaned of
control characters and redacted before it is cut to its limit, every list is bounded, and a
malformed or truncated record gives a partial digest that says so (``complete``, ``notes``),
never an exception. Pure: :mod:`executive.workers.record` reads the files.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from executive import relpath
from executive.redact import scrub
from executive.untrusted import clean, clip, one_line
from executive.workers import shell
from executive.workers.runlog import Reading, Said, ToolCall, ToolResult

MAX_FILES = 40
MAX_COMMANDS = 24
MAX_FIXES = 5
MAX_TESTS = 10
MAX_NOTES = 8
PATH_CHARS = relpath.MAX_CHARS
COMMAND_CHARS = 240
ERROR_CHARS = 200
TAIL_CHARS = 400
SUMMARY_CHARS = 1500
SHOWN_PATHS = 8
ACROSS = "the previous attempt"  # a fix's ``failed`` when it spans attempts
# Redaction runs on a window this much wider than what is kept, so a secret that straddles
# the cut is still recognised whole.
_MARGIN = 512
_EDITS = {
    "Write": "created",
    "Edit": "modified",
    "MultiEdit": "modified",
    "NotebookEdit": "modified",
}
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
# The CLI's shell snapshot of a read-only home says this before every command in a sandbox.
_NOISE_LINES = ("pyenv: cannot rehash:",)

Path = Annotated[str, Field(min_length=1, max_length=PATH_CHARS)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileChange(_Model):
    path: Path
    change: Literal["created", "modified", "deleted"]


class Command(_Model):
    command: Annotated[str, Field(max_length=COMMAND_CHARS)]
    exit_code: int | None = None
    failed: bool = False
    error: Annotated[str, Field(max_length=ERROR_CHARS)] = ""  # the line naming the failure
    tail: Annotated[str, Field(max_length=TAIL_CHARS)] = ""  # its output's end, failures only


class Fix(_Model):
    """A failure, then what made it pass: the files changed between, the command that passed."""

    failed: Annotated[str, Field(max_length=COMMAND_CHARS)]
    error: Annotated[str, Field(max_length=ERROR_CHARS)] = ""
    files: Annotated[list[Path], Field(max_length=MAX_FILES)] = []
    then: Annotated[str, Field(max_length=COMMAND_CHARS)] = ""

    def way(self) -> str:
        """What made it pass, as advice: ``change a.py, then run `PYTHONPATH=src pytest```."""
        steps = [f"change {listed(self.files)}"] if self.files else []
        if self.then:
            steps.append(f"run `{self.then}`")
        elif self.files and self.failed != ACROSS:
            steps.append("run it again")
        return ", then ".join(steps)

    def lesson(self, where: str) -> str:
        """The fix as one line of advice, ``where`` naming the bundle and step."""
        error = f" with “{self.error}”" if self.error else ""
        if self.failed == ACROSS:
            return f"When {where} fails{error}: {self.way()}. That made the next attempt pass."
        return f"In {where}, when `{self.failed}` fails{error}: {self.way()}. That made it pass."


class TestRun(_Model):
    command: Annotated[str, Field(max_length=COMMAND_CHARS)]
    passed: bool
    counts: Annotated[str, Field(max_length=ERROR_CHARS)] = ""


class Experience(_Model):
    source: Literal["stream-json", "transcript", "command", "none"]
    files: Annotated[list[FileChange], Field(max_length=MAX_FILES)] = []
    commands: Annotated[list[Command], Field(max_length=MAX_COMMANDS)] = []
    fixes: Annotated[list[Fix], Field(max_length=MAX_FIXES)] = []
    tests: Annotated[list[TestRun], Field(max_length=MAX_TESTS)] = []
    summary: Annotated[str, Field(max_length=SUMMARY_CHARS)] = ""
    complete: bool = True  # the record ended as a finished run's does and every line was read
    notes: Annotated[list[Annotated[str, Field(max_length=300)]], Field(max_length=MAX_NOTES)] = []

    @property
    def changed(self) -> list[str]:
        """The paths it created or changed (not those it deleted), in the digest's order."""
        return [f.path for f in self.files if f.change != "deleted"]

    @property
    def empty(self) -> bool:
        return not (self.files or self.commands or self.summary)


def listed(paths: Sequence[str], shown: int = SHOWN_PATHS) -> str:
    """``a.py, b.py and 3 more``."""
    more = len(paths) - shown
    return ", ".join(paths[:shown]) + (f" and {more} more" if more > 0 else "")


# --- text from the worker ----------------------------------------------------------------------
def _head(text: str, limit: int) -> str:
    """The start of ``text``, redacted first (a secret cut in half would no longer match)."""
    kept = scrub(clean(text[: limit + _MARGIN]))
    return clip(kept, limit)


def _tail(text: str, limit: int) -> str:
    lines = [line for line in text.splitlines() if not line.startswith(_NOISE_LINES)]
    kept = scrub(clean("\n".join(lines)[-(limit + _MARGIN) :])).strip()
    return kept if len(kept) <= limit else "…" + kept[-(limit - 1) :]


def _last_lines(output: str, count: int = 5, limit: int = SUMMARY_CHARS // 3) -> str:
    """How a command's output ended: its last few non-empty lines, each whole if it can be."""
    lines = [line for line in output.splitlines()[-50:] if line.strip()][-count:]
    return _tail("\n".join(lines), limit).lstrip("…")


def _command(command: str, exit_code: int | None, failed: bool, output: str) -> Command:
    """A command as the digest keeps it: a failure with the line naming it and its output's end."""
    return Command(
        command=_head(one_line(command), COMMAND_CHARS),
        exit_code=exit_code,
        failed=failed,
        error=_head(shell.error_line(output), ERROR_CHARS) if failed else "",
        tail=_tail(output, TAIL_CHARS) if failed else "",
    )


def _summary(text: str) -> str:
    """The worker's account, cut at a sentence end where one is near the limit."""
    full = scrub(clean(text[: SUMMARY_CHARS + _MARGIN])).strip()
    if len(full) <= SUMMARY_CHARS:
        return full
    cut = full[: SUMMARY_CHARS - 1]
    end = max(cut.rfind(". "), cut.rfind(".\n"))
    return (cut[: end + 1] if end > SUMMARY_CHARS // 2 else cut) + "…"


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


# --- the digest of a Claude Code record ---------------------------------------------------------
class _Walk:
    """One pass over a record's steps: commands in order, edits between them."""

    def __init__(self, relative: Callable[[str], str | None]) -> None:
        self.relative = relative
        self.calls: dict[str, ToolCall] = {}
        self.commands: list[Command] = []
        self.edited_before: list[int] = []  # per command: how many edits came before it
        self.edits: list[FileChange] = []
        self.read: set[str] = set()
        self.outside = 0
        self.said: list[str] = []
        self.outputs: list[str] = []  # per command: the end of what it printed

    def event(self, event: ToolCall | ToolResult | Said) -> None:
        if isinstance(event, Said):
            self.said.append(event.text)
        elif isinstance(event, ToolCall):
            self.calls[event.id] = event
        elif (call := self.calls.pop(event.id, None)) is not None:
            self._result(call, event)

    def _result(self, call: ToolCall, result: ToolResult) -> None:
        if call.name == "Bash":
            self._ran(str(call.input.get("command", "")), result)
            return
        raw = call.input.get("file_path", call.input.get("notebook_path"))
        if not isinstance(raw, str):
            return
        path = self.relative(raw)
        if path is None:
            self.outside += call.name in _EDITS
        elif call.name == "Read":
            if not result.is_error:  # a read of a file not there yet does not make it old
                self.read.add(path)
        elif call.name in _EDITS and not result.is_error:
            before = next((e.change for e in self.edits if e.path == path), None)
            # A file this run created stays created, however often it is edited after.
            change = before or ("modified" if path in self.read else _EDITS[call.name])
            self.edits.append(FileChange(path=path, change=change))

    def _ran(self, command: str, result: ToolResult) -> None:
        exit_code = result.exit_code
        if exit_code is None and not result.is_error:
            exit_code = 0
        self.edited_before.append(len(self.edits))
        failed = result.is_error or bool(exit_code)
        self.commands.append(_command(command, exit_code, failed, result.text))
        self.outputs.append(result.text[-4000:])

    def fixes(self) -> list[Fix]:
        """Each failed command's key, then the first later pass of the same key: a fix."""
        found: list[Fix] = []
        open_failures: dict[str, int] = {}  # key -> index of the first failure not yet fixed
        for index, command in enumerate(self.commands):
            name = shell.key(command.command)
            if not name or shell.only_looks(command.command):
                continue
            if command.failed:
                if command.error:  # a silent failure names nothing to learn from
                    open_failures.setdefault(name, index)
                continue
            first = open_failures.pop(name, None)
            if first is None:
                continue
            failure = self.commands[first]
            between = self.edits[self.edited_before[first] : self.edited_before[index]]
            files = list(dict.fromkeys(e.path for e in between))[:MAX_FILES]
            then = command.command if command.command != failure.command or not files else ""
            found.append(Fix(failed=failure.command, error=failure.error, files=files, then=then))
        return found[-MAX_FIXES:]

    def tests(self) -> list[TestRun]:
        runs = [
            TestRun(
                command=c.command,
                passed=not c.failed,
                counts=_head(shell.test_counts(output), ERROR_CHARS),
            )
            for c, output in zip(self.commands, self.outputs, strict=True)
            if shell.is_test(c.command)
        ]
        return runs[-MAX_TESTS:]


def digest(
    reading: Reading,
    *,
    relative: Callable[[str], str | None],
    changes: Sequence[FileChange] | None = None,
) -> Experience:
    """The experience in a Claude Code record. ``changes``: the folder's own account of what
    changed (created, changed, deleted), which wins over the record's where it is given."""
    walk = _Walk(relative)
    for event in reading.events:
        walk.event(event)
    files, more_files = bounded_files(list(changes) if changes is not None else walk.edits)
    commands = walk.commands[-MAX_COMMANDS:]
    final = reading.final if reading.final else (walk.said[-1] if walk.said else "")
    notes = list(reading.problems)
    if reading.kind == "stream-json" and not reading.finished:
        notes.append("the record ends without its result line: the run was cut short")
    for count, what in (
        (len(walk.calls), "tool calls without a result"),
        (walk.outside, "edits of paths outside the worker's folder or not plain, left out"),
        (more_files, "more files, left out"),
        (len(walk.commands) - len(commands), "earlier commands, left out"),
    ):
        if count:
            notes.append(f"{count} {what}")
    return Experience(
        source="transcript" if reading.kind == "transcript" else "stream-json",
        files=files,
        commands=commands,
        fixes=walk.fixes(),
        tests=walk.tests(),
        summary=_summary(final),
        complete=not reading.skipped and (reading.finished or reading.kind == "transcript"),
        notes=[_head(n, 300) for n in notes][:MAX_NOTES],
    )


def of_command(
    *, command: str, exit_code: int | None, output: str, changes: Sequence[FileChange]
) -> Experience:
    """A command worker's experience: what changed in its folder, and how its output ended."""
    files, more = bounded_files(changes)
    return Experience(
        source="command",
        files=files,
        commands=[_command(command, exit_code, exit_code != 0, output)],
        summary=_last_lines(output),
        notes=[f"{more} more files, left out"] if more else [],
    )


def fix_across(previous_error: str, experience: Experience | None) -> Fix | None:
    """The fix across attempts: the last one failed with ``previous_error``, this one passed
    after changing these files and running these commands. None when it changed nothing (a
    pass on a plain retry is luck, not a fix), and for a command worker: it runs the same
    command every attempt, so what changed was the world, not the way through."""
    if experience is None or experience.source == "command":
        return None
    passed = [c for c in experience.commands if not c.failed and c.exit_code == 0]
    test = next((t.command for t in reversed(experience.tests) if t.passed), "")
    then = test or (passed[-1].command if passed else "")
    if not experience.changed and not then:
        return None
    return Fix(
        failed=ACROSS,
        error=_head(shell.error_line(previous_error), ERROR_CHARS),
        files=experience.changed[:MAX_FILES],
        then=then,
    )


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

"""The digest of a worker's record: what it did, read off the steps it took.

One pass over a Claude Code record (:mod:`executive.workers.record.runlog` reads its lines) keeps
the commands in order with the edits between them, the functions and classes those edits
touched (:mod:`executive.workers.record.symbols`), the failure→fix pairs (a command that failed,
then a later run of the *same* command that passed: :func:`executive.workers.record.shell.same`),
the tests, and the worker's account. A command worker's digest is its folder and how its
output ended. Pure: the files are read by :mod:`executive.workers.record.reader`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from executive.redact import scrub
from executive.untrusted import clean, clip, one_line
from executive.workers.record import shell, symbols
from executive.workers.record.experience import (
    ACROSS,
    COMMAND_CHARS,
    ERROR_CHARS,
    MAX_COMMANDS,
    MAX_FILES,
    MAX_FIXES,
    MAX_NOTES,
    MAX_SYMBOLS,
    MAX_TESTS,
    SUMMARY_CHARS,
    SYMBOL_CHARS,
    TAIL_CHARS,
    Command,
    Experience,
    FileChange,
    Fix,
    Symbol,
    TestRun,
    bounded_files,
    scratch,
    scratch_name,
)
from executive.workers.record.runlog import Reading, Said, ToolCall, ToolResult

# Redaction runs on a window this much wider than what is kept, so a secret that straddles
# the cut is still recognised whole.
_MARGIN = 512
_EDITS = {
    "Write": "created",
    "Edit": "modified",
    "MultiEdit": "modified",
    "NotebookEdit": "modified",
}
_TEST_FOLDERS = frozenset(["tests", "test", "testing"])
# Failures of the run's setting, not of the code under work: an interpreter of the wrong
# version, a package not installed, a folder not there. Never a run's symptom.
_SETTING = re.compile(
    r"SyntaxError: (?:invalid syntax|Non-ASCII)|ModuleNotFoundError|ImportError|No module named"
    r"|no such file or directory|command not found|Permission denied|UnsupportedPythonError",
    re.IGNORECASE,
)
# The CLI's shell snapshot of a read-only home says this before every command in a sandbox.
_NOISE_LINES = ("pyenv: cannot rehash:",)


# --- text from the worker ----------------------------------------------------------------------
def _head(text: str, limit: int) -> str:
    """The start of ``text``, redacted first (a secret cut in half would no longer match)."""
    return clip(scrub(clean(text[: limit + _MARGIN])), limit)


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


def harness(error: str) -> bool:
    """Whether an error is the run's setting failing (an interpreter of the wrong version, a
    package not installed, a folder not there), not the code under work."""
    return bool(_SETTING.search(error))


def own_test(command: str) -> bool:
    """Whether ``command`` runs the project's tests, not a script the run wrote for itself
    (``python test_issue.py``)."""
    if not shell.is_test(command):
        return False
    name = shell.key(command)
    ran = name.startswith("python ") and not name.startswith(("python -m", "python -c"))
    script = name.split(" ", 1)[1] if ran else shell.target(command)
    parts = script.split("/")
    if not script or _TEST_FOLDERS.intersection(parts[:-1]):
        return True
    return not scratch_name(parts[-1])


# --- the digest of a Claude Code record ---------------------------------------------------------
class _Walk:
    """One pass over a record's steps: commands in order, edits between them."""

    def __init__(self, relative: Callable[[str], str | None]) -> None:
        self.relative = relative
        self.calls: dict[str, ToolCall] = {}
        self.commands: list[Command] = []
        self.edited_before: list[int] = []  # per command: how many edits came before it
        self.edits: list[FileChange] = []
        self.symbols: list[Symbol] = []
        self.shown: dict[str, dict[int, str]] = {}  # each file's lines as a tool last showed
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
                self.shown.setdefault(path, {}).update(symbols.numbered(result.text))
        elif call.name in _EDITS and not result.is_error:
            self._edited(path, call)
            self.shown.setdefault(path, {}).update(symbols.numbered(result.text))

    def _edited(self, path: str, call: ToolCall) -> None:
        before = next((e.change for e in self.edits if e.path == path), None)
        # A file this run created stays created, however often it is edited after.
        change = before or ("modified" if path in self.read else _EDITS[call.name])
        self.edits.append(FileChange(path=path, change=change))
        for name in _touched(call, self.shown.get(path, {})):
            self.symbols.append(Symbol(path=path, name=clip(name, SYMBOL_CHARS)))

    def _ran(self, command: str, result: ToolResult) -> None:
        exit_code = result.exit_code
        if exit_code is None and not result.is_error:
            exit_code = 0
        self.edited_before.append(len(self.edits))
        # When the chain's status is not its command's (``X > out; cat out``), its output says.
        said = shell.failed_output(result.text) if shell.masked(command) else None
        failed = said if said is not None else (result.is_error or bool(exit_code))
        self.commands.append(_command(command, exit_code, failed, result.text))
        self.outputs.append(result.text[-4000:])

    def fixes(self) -> list[Fix]:
        """Each failed command, then the first later pass of the same command: a fix."""
        found: list[Fix] = []
        open_failures: list[int] = []  # the failures not yet fixed, first first
        for index, command in enumerate(self.commands):
            if not shell.key(command.command) or shell.only_looks(command.command):
                continue
            if command.failed:
                if command.error and not any(
                    shell.same(self.commands[i].command, command.command) for i in open_failures
                ):
                    open_failures.append(index)  # a silent failure names nothing to learn
                continue
            first = next((i for i in open_failures if self._fixed(i, index)), None)
            if first is None:
                continue
            open_failures.remove(first)
            found.append(self._fix(first, index))
        return found[-MAX_FIXES:]

    def _fixed(self, failure: int, passed: int) -> bool:
        """Whether ``passed`` ran what ``failure`` ran, and something between could have made
        the difference: a change to a file, or a change to how it was run (its environment,
        its interpreter), not only which tests it chose."""
        failed, ran = self.commands[failure].command, self.commands[passed].command
        if not shell.same(failed, ran):
            return False
        edited = self.edited_before[passed] > self.edited_before[failure]
        return edited or shell.same_arguments(failed, ran)

    def _fix(self, first: int, index: int) -> Fix:
        failure, command = self.commands[first], self.commands[index]
        between = self.edits[self.edited_before[first] : self.edited_before[index]]
        files = list(dict.fromkeys(e.path for e in between))[:MAX_FILES]
        if shell.program(failure.command) != shell.program(command.command):
            files = []  # another interpreter made it pass, not what changed meanwhile
        then = command.command if command.command != failure.command or not files else ""
        return Fix(failed=failure.command, error=failure.error, files=files, then=then)

    def tests(self) -> list[TestRun]:
        runs = [
            TestRun(
                command=c.command,
                passed=not c.failed,
                counts=_head(shell.test_counts(output), ERROR_CHARS),
                own=own_test(c.command),
            )
            for c, output in zip(self.commands, self.outputs, strict=True)
            if shell.is_test(c.command) and not shell.unsafe(c.command)
        ]
        return runs[-MAX_TESTS:]

    def symptom(self, fixes: list[Fix], changed: set[str] | None) -> str:
        """What was wrong: the exception a failure named that a change to the project's code
        then fixed (a failure of the run's setting, a wrong interpreter or a folder not
        there, is no symptom of the code). With ``changed`` (the folder's own account), only
        a fix whose files did change counts."""
        for fix in fixes:
            code = [p for p in fix.files if not scratch(FileChange(path=p, change="modified"))]
            seen = changed is None or set(code) <= changed
            if code and seen and shell.names_exception(fix.error) and not harness(fix.error):
                return fix.error
        return ""


def _touched(call: ToolCall, shown: dict[int, str]) -> list[str]:
    """The names an edit call touched, given its file's lines as last shown."""
    inputs = call.input
    if call.name == "Write":
        content = inputs.get("content")
        names = symbols.defined(content, top_only=True) if isinstance(content, str) else []
        return [name for _, name in names][:3]
    edits = inputs.get("edits") if call.name == "MultiEdit" else [inputs]
    found: list[str] = []
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict):
            old, new = edit.get("old_string"), edit.get("new_string")
            if isinstance(old, str) and isinstance(new, str):
                found += symbols.of_edit(shown, old, new)
    return found


def digest(
    reading: Reading,
    *,
    relative: Callable[[str], str | None],
    changes: Sequence[FileChange] | None = None,
) -> Experience:
    """The experience in a Claude Code record. ``changes``: the folder's own account of what
    changed (created, changed, deleted), which wins over the record's where it is given:
    then the files are observed, and the record's symbols are kept for those files only."""
    walk = _Walk(relative)
    for event in reading.events:
        walk.event(event)
    observed = changes is not None
    files, more_files = bounded_files(list(changes) if observed else walk.edits)
    kept = {f.path for f in files}
    found = [s for s in walk.symbols if s.path in kept]
    commands = walk.commands[-MAX_COMMANDS:]
    fixes = walk.fixes()
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
        observed=observed,
        symbols=list({(s.path, s.name): s for s in found}.values())[:MAX_SYMBOLS],
        commands=commands,
        fixes=fixes,
        tests=walk.tests(),
        symptom=walk.symptom(fixes, {f.path for f in files} if observed else None),
        summary=_summary(final),
        complete=not reading.skipped and (reading.finished or reading.kind == "transcript"),
        notes=[_head(n, 300) for n in notes][:MAX_NOTES],
    )


def of_command(
    *,
    command: str,
    exit_code: int | None,
    output: str,
    changes: Sequence[FileChange],
    observed: bool = True,
) -> Experience:
    """A command worker's experience: what changed in its folder (``observed``: the daemon
    could compare it), and how its output ended."""
    files, more = bounded_files(changes)
    return Experience(
        source="command",
        files=files,
        observed=observed,
        commands=[_command(command, exit_code, exit_code != 0, output)],
        summary=_last_lines(output),
        notes=[f"{more} more files, left out"] if more else [],
    )


def fix_across(previous_error: str, experience: Experience | None) -> Fix | None:
    """The fix across attempts: the last one failed with ``previous_error``, this one passed
    after changing these files and running this test. None when it changed nothing (a pass
    on a plain retry is luck, not a fix), and for a command worker: it runs the same command
    every attempt, so what changed was the world, not the way through."""
    if experience is None or experience.source == "command":
        return None
    then = next((t.command for t in reversed(experience.tests) if t.passed and t.own), "")
    files = experience.project_files
    if not files and not then:
        return None
    return Fix(
        failed=ACROSS,
        error=_head(shell.error_line(previous_error), ERROR_CHARS),
        files=files[:MAX_FILES],
        then=then,
    )

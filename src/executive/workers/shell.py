"""What a shell command a worker ran was, as the experience digest needs to know it.

Two runs of "the same" command rarely share their text (``pytest -q`` then
``PYTHONPATH=src python -m pytest -q`` is a failure and its fix), so commands are compared by
their *key*: the program (and its sub-command) the last link of a ``&&`` chain runs, without
environment assignments, wrappers or a ``cd``. Pure functions over text; nothing runs.
"""

from __future__ import annotations

import re
import shlex

from executive.untrusted import clip

# Programs whose first argument says what they do (``npm test`` is not ``npm install``).
_SUBCOMMANDS = frozenset(
    [
        "npm",
        "yarn",
        "pnpm",
        "npx",
        "cargo",
        "go",
        "make",
        "git",
        "uv",
        "pip",
        "pip3",
        "docker",
        "bundle",
        "mvn",
        "gradle",
        "dotnet",
        "poetry",
        "hatch",
        "pdm",
        "bun",
        "deno",
    ]
)
_WRAPPERS = frozenset(
    ["sudo", "env", "nice", "time", "timeout", "nohup", "exec", "command", "stdbuf"]
)
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RUNNERS = frozenset(
    {
        "pytest",
        "py.test",
        "python -m pytest",
        "python -m unittest",
        "python -m tox",
        "tox",
        "nox",
        "npm test",
        "yarn test",
        "pnpm test",
        "bun test",
        "go test",
        "cargo test",
        "make test",
        "make check",
        "jest",
        "vitest",
        "mvn test",
        "gradle test",
        "dotnet test",
        "rspec",
        "phpunit",
        "ctest",
    }
)
# An exception's name (``ModuleNotFoundError``, ``AssertionError``) says most; a runner's
# count line ("1 failed in 0.2s") says least, so it is the last choice.
_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b")
_RUNNER_LINE = re.compile(r"^=*\s*\d+ \w+(?:, \d+ \w+)* in [\d.]+s")
_PYTEST_MARK = re.compile(r"^E\s+")
# Commands that only look (a search that finds nothing exits 1): never half of a fix.
_LOOKING = frozenset(
    [
        "find",
        "grep",
        "egrep",
        "rg",
        "ag",
        "ls",
        "cat",
        "head",
        "tail",
        "less",
        "wc",
        "which",
        "type",
        "echo",
        "printf",
        "pwd",
        "cd",
        "tree",
        "file",
        "stat",
        "du",
        "df",
        "awk",
        "sort",
        "uniq",
        "diff",
        "git status",
        "git log",
        "git diff",
        "git show",
        "git grep",
        "git blame",
        "export",
    ]
)
_NAMES_ERROR = re.compile(
    r"error|exception|fail|fatal|denied|refused|timeout|timed out|not found|no such|cannot", re.I
)
_COUNT = re.compile(
    r"\b(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b"
)
_UNITTEST = re.compile(r"\bRan (\d+) tests? in [\d.]+s\s+(OK|FAILED[^\n]*)")


def key(command: str) -> str:
    """``cd app && FOO=1 timeout 60 python3 -m pytest -q x`` → ``python -m pytest``."""
    words = _last_link(command)
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
        wrapper = words.pop(0)
        if wrapper == "timeout" and words and not words[0].startswith("-"):
            words.pop(0)  # its duration
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if _PYTHON.fullmatch(program):
        if rest[:1] == ["-m"] and len(rest) > 1:
            return f"python -m {rest[1]}"
        if rest[:1] == ["-c"]:
            return "python -c"
        script = next((w for w in rest if not w.startswith("-")), "")
        return f"python {script}".strip()
    if program in _SUBCOMMANDS:
        sub = next((w for w in rest if not w.startswith("-")), "")
        return f"{program} {sub}".strip()
    return program


def _last_link(command: str) -> list[str]:
    """The words of the last link of a ``&&``/``;``/``||`` chain, up to its first pipe;
    quotes respected (a ``;`` inside ``python -c '...'`` separates nothing)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: the words as written
        tokens = command.split()
    links: list[list[str]] = [[]]
    for token in tokens:
        if token in ("&&", ";", "||", "&"):
            links.append([])
        else:
            links[-1].append(token)
    last = next((link for link in reversed(links) if link), [])
    return last[: last.index("|")] if "|" in last else last


def only_looks(command: str) -> bool:
    """Whether ``command`` only looks around (a search, a listing, a print): its failing is
    not a failure to learn from (``grep`` exits 1 when it finds nothing)."""
    return key(command) in _LOOKING


def is_test(command: str) -> bool:
    """Whether ``command`` runs a test suite (a runner, or a script named for tests)."""
    found = key(command)
    return found in _RUNNERS or (found.startswith("python ") and "test" in found.split(" ", 1)[1])


def error_line(output: str, limit: int = 200) -> str:
    """The line of ``output`` that names the failure, as written (tracebacks end with it)."""
    lines = [_PYTEST_MARK.sub("", line.strip()) for line in output.splitlines() if line.strip()]
    if not lines:
        return ""
    exceptions = [line for line in lines if _EXCEPTION.search(line)]
    named = [line for line in lines if _NAMES_ERROR.search(line) and not _RUNNER_LINE.match(line)]
    line = (exceptions or named or lines)[-1]
    return clip(line, limit)


def test_counts(output: str) -> str:
    """``3 passed, 1 failed`` as the runner said it last, or ``""`` when it said nothing."""
    for line in reversed(output.splitlines()):
        counts = _COUNT.findall(line)
        if counts:
            return ", ".join(f"{n} {what}" for n, what in counts)
    ran = _UNITTEST.search(output)
    return f"{ran.group(1)} tests: {ran.group(2)}" if ran else ""

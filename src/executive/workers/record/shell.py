"""What a shell command a worker ran was, as the experience digest needs to know it.

Two runs of "the same" command rarely share their text (``pytest -q`` then
``PYTHONPATH=src python -m pytest -q > out.txt; cat out.txt`` is a failure and its fix), so
commands are compared by their *identity*: the meaningful link of a chain (the last one that
does more than look: not the ``cat`` that shows what it wrote), its program and what it runs
(``npm run build`` is not ``npm run test``; ``python -m pytest`` is ``pytest``), without
environment assignments, wrappers or a ``cd``, and its *target* (the first path it names).
When that link's status is hidden (a later link, a pipe) its output says how it went. A
command that runs what it downloads is never advice. Pure functions over text; nothing runs.
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
# Programs whose ``run`` names a script (``npm run build``): the script is the identity.
_SCRIPT_RUNNERS = frozenset(["npm", "yarn", "pnpm", "bun", "uv", "poetry", "pdm", "hatch"])
# Names of one thing: ``python -m pytest`` runs what ``pytest`` runs.
_SAME_AS = {
    "python -m pytest": "pytest",
    "py.test": "pytest",
    "npm run test": "npm test",
    "yarn run test": "yarn test",
    "pnpm run test": "pnpm test",
    "bun run test": "bun test",
    "python -m tox": "tox",
    "python -m nox": "nox",
}
_REDIRECT = re.compile(r"^\d?[<>]&?\S*$|^&>\S*$")
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)
# Commands that run what they download: a download piped or fed into an interpreter.
_FETCH = r"(?:curl|wget|fetch|http|aria2c)\b[^|;&]*"
_SHELLS = r"(?:sudo\s+)?(?:ba|z|da|k|c|tc|fi)?sh|python\d*|perl|ruby|node|php"
_UNSAFE = [
    (re.compile(rf"\b{_FETCH}\|\s*(?:{_SHELLS})\b"), "it pipes a download into an interpreter"),
    (
        re.compile(rf"(?:{_SHELLS})\s+(?:-\w+\s+)*(?:<\(|-c\s+[\"']?\$\()\s*{_FETCH}"),
        "it runs a download with an interpreter",
    ),
    (re.compile(rf"\b(?:eval|source|\.)\s+[\"']?\$?[(<]\(?\s*{_FETCH}"), "it runs a download"),
]
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RUNNERS = frozenset(
    {
        "pytest",
        "python -m unittest",
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
    """``cd app && FOO=1 timeout 60 python3 -m pytest -q x > o; cat o`` → ``pytest``."""
    return _identity(_meaningful(command))[0]


def target(command: str) -> str:
    """The first path the meaningful link names after what it runs (``tests/test_a.py`` of
    ``pytest -q tests/test_a.py::test_b``), or ``""``."""
    return _identity(_meaningful(command))[1]


def same(first: str, second: str) -> bool:
    """Whether two commands run the same thing: one identity, and one target (or one of
    them runs the whole, naming none)."""
    name, aim = _identity(_meaningful(first))
    other, other_aim = _identity(_meaningful(second))
    return bool(name) and name == other and (aim == other_aim or not aim or not other_aim)


def core(command: str) -> str:
    """The meaningful link as it reads alone: ``PYTHONPATH=src pytest -q tests`` of
    ``cd app && PYTHONPATH=src pytest -q tests 2>&1 | tail -20``."""
    return shlex.join(_meaningful(command))


def program(command: str) -> str:
    """The program the meaningful link runs, as written (``python3.11``, ``python``)."""
    words = _meaningful(command)
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    return words[0].rsplit("/", 1)[-1] if words else ""


def same_arguments(first: str, second: str) -> bool:
    """Whether two runs of one thing pass it the same arguments: they differ only before
    the program (its environment, its interpreter), as ``PYTHONPATH=src pytest -q`` and
    ``pytest -q`` do; a narrower selection of tests is another run, not a fix."""
    return _arguments(_meaningful(first)) == _arguments(_meaningful(second))


def _arguments(words: list[str]) -> list[str]:
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    rest = words[1:]
    if words and _PYTHON.fullmatch(words[0].rsplit("/", 1)[-1]) and rest[:1] == ["-m"]:
        rest = rest[2:]  # ``python -m pytest X`` passes X, as ``pytest X`` does
    return rest


def masked(command: str) -> bool:
    """Whether the chain's status is not its meaningful link's (a link after it, or a pipe):
    then only its output can say whether it failed."""
    chain = _chain(command)
    index = _meaningful_index(chain)
    return index is not None and (index < len(chain) - 1 or "|" in chain[index])


def _identity(words: list[str]) -> tuple[str, str]:
    """(what the words run, the first path they name after it)."""
    words = list(words)
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
        wrapper = words.pop(0)
        if wrapper == "timeout" and words and not words[0].startswith("-"):
            words.pop(0)  # its duration
    if not words:
        return "", ""
    program = words[0].rsplit("/", 1)[-1]
    if "<<" in words:  # a here-document: the code it feeds is its own
        return program, " ".join(words[words.index("<<") + 1 :])[:200]
    rest = [w for w in words[1:] if not w.startswith("-")]
    if _PYTHON.fullmatch(program):
        if words[1:2] == ["-m"] and len(words) > 2:
            name, rest = f"python -m {words[2]}", [w for w in words[3:] if not w.startswith("-")]
        elif words[1:2] == ["-c"]:
            return "python -c", " ".join(words[2:3])[:200]  # its code: never another's
        else:
            name, rest = f"python {rest[0]}".strip() if rest else "python", rest[1:]
    elif program in _SUBCOMMANDS and rest:
        name, rest = f"{program} {rest[0]}", rest[1:]
        if rest and name.endswith(" run") and program in _SCRIPT_RUNNERS:
            name, rest = f"{program} run {rest[0]}", rest[1:]
    else:
        name = program
    return _SAME_AS.get(name, name), rest[0].split("::", 1)[0] if rest else ""


def _chain(command: str) -> list[list[str]]:
    """The words of each link of a ``&&``/``;``/``||`` chain, pipes included; quotes
    respected (a ``;`` inside ``python -c '...'`` separates nothing)."""
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
    return [link for link in links if link]


def _words(link: list[str]) -> list[str]:
    """A link's own words: up to its first pipe, without redirections and their files."""
    kept: list[str] = []
    skip = False
    for word in link[: link.index("|")] if "|" in link else link:
        if skip:
            skip = False
        elif word.startswith("<<"):  # a here-document (or string): the code it feeds follows
            kept.append("<<")
        elif word in (">", ">>", "<", "&>", ">&", "<&"):
            skip = True
            if kept and kept[-1].isdigit():  # ``2>&1`` comes as ``2``, ``>&``, ``1``
                kept.pop()
        elif not _REDIRECT.match(word):
            kept.append(word)
    return kept


def _meaningful_index(chain: list[list[str]]) -> int | None:
    """The last link that does more than look (``X > out.txt; cat out.txt`` is ``X``), or
    the last link when every one only looks; None for an empty command."""
    doing = [i for i, link in enumerate(chain) if _identity(_words(link))[0] not in _LOOKING]
    return doing[-1] if doing else (len(chain) - 1 if chain else None)


def _meaningful(command: str) -> list[str]:
    chain = _chain(command)
    index = _meaningful_index(chain)
    return [] if index is None else _words(chain[index])


def unsafe(command: str) -> str | None:
    """Why ``command`` must never be advice (it runs what it downloads), or None."""
    return next((why for pattern, why in _UNSAFE if pattern.search(command)), None)


def failed_output(output: str) -> bool | None:
    """What a command's output says of it when its status cannot: True (a runner counted
    failures or errors, or a traceback ended it), False (a runner counted passes only), None."""
    counts = _COUNT.findall(output[-4000:])
    if counts:
        return any(what.startswith(("failed", "error")) and int(n) > 0 for n, what in counts)
    ran = _UNITTEST.search(output)
    if ran:
        return not ran.group(2).startswith("OK")
    if _TRACEBACK.search(output):
        return True
    last = next((line for line in reversed(output.splitlines()) if line.strip()), "")
    return True if names_exception(last) else None


def only_looks(command: str) -> bool:
    """Whether ``command`` only looks around (a search, a listing, a print): its failing is
    not a failure to learn from (``grep`` exits 1 when it finds nothing)."""
    return key(command) in _LOOKING


def is_test(command: str) -> bool:
    """Whether ``command`` runs a test suite (a runner, or a script named for tests)."""
    found = key(command)
    return found in _RUNNERS or (found.startswith("python ") and "test" in found.split(" ", 1)[1])


def names_exception(line: str) -> bool:
    """Whether ``line`` names an exception (``ModuleNotFoundError``), not only a failure."""
    return bool(_EXCEPTION.search(line))


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

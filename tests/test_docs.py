"""The README stays a ten-minute read that keeps the quick start; docs/ holds the rest.

The docs site itself (every page in the nav, every link and anchor valid) is checked by
`mkdocs build --strict`, which `make test` runs.
"""

from __future__ import annotations

import re

from tests.conftest import REPO

README = REPO / "README.md"

# The two commands of the quick start, byte for byte: the first sets everything up and runs
# the daemon on its embedded defaults, the second runs the tests.
QUICK_START = (
    "```sh\n"
    "make run    # set up .venv, create ./demo-home if missing, run the daemon (embedded, offline)\n"
    "make test   # the whole suite: lint, format, architecture contracts, tests\n"
    "```\n"
)

_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_at_most_250_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move the detail to docs/"


def test_the_readme_keeps_the_two_quick_start_commands():
    assert QUICK_START in README.read_text(encoding="utf-8")


def test_the_readme_names_no_issue_numbers():
    found = re.findall(r"(?i)\bissues? #?\d+|(?<![\w&])#\d+\b", README.read_text(encoding="utf-8"))
    assert found == [], "issue numbers belong in CHANGELOG.md and git, not the README"


def test_every_file_the_readme_links_to_exists():
    text = README.read_text(encoding="utf-8")
    targets = {target for target in _LINK.findall(text) if "://" not in target}
    missing = sorted(target for target in targets if not (REPO / target).exists())
    assert targets and missing == [], f"README.md links to missing files: {missing}"


def test_every_docs_page_is_in_the_site_nav():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {path.relative_to(REPO / "docs").as_posix() for path in (REPO / "docs").rglob("*.md")}
    missing = sorted(page for page in pages if f": {page}\n" not in nav)
    assert missing == [], f"docs pages missing from mkdocs.yml's nav: {missing}"


SRC = REPO / "src" / "executive"
ROOMS = REPO / "docs" / "rooms.md"
INDEX_HEADING = "## Every module\n"
_ROW = re.compile(r"^\| `([^`]+)` \|", re.MULTILINE)
_PY_NAME = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.py)\b")


def modules() -> set[str]:
    """Every module under src/executive as rooms.md names it: its path from there, and a
    package by its folder (``memory/store/``; the root package is ``__init__.py``)."""
    names = set()
    for path in SRC.rglob("*.py"):
        relative = path.relative_to(SRC)
        if path.name == "__init__.py" and relative.parent.parts:
            names.add(relative.parent.as_posix() + "/")
        else:
            names.add(relative.as_posix())
    return names


def test_rooms_names_every_module_and_nothing_else():
    text = ROOMS.read_text(encoding="utf-8")
    assert INDEX_HEADING in text, f"docs/rooms.md lost its {INDEX_HEADING.strip()!r} section"
    named = _ROW.findall(text.split(INDEX_HEADING, 1)[1])
    twice = sorted({name for name in named if named.count(name) > 1})
    missing = sorted(modules() - set(named))
    stale = sorted(set(named) - modules())
    assert (missing, stale, twice) == ([], [], []), (
        "docs/rooms.md's module index (## Every module) is out of date:\n"
        f"  missing (add a row under its package): {', '.join(missing) or 'none'}\n"
        f"  stale (no such module now: remove or rename the row): {', '.join(stale) or 'none'}\n"
        f"  named twice: {', '.join(twice) or 'none'}"
    )


def test_every_python_file_rooms_mentions_exists():
    """The prose and the drawing too: a path resolves from src/executive (or the repository),
    a bare file name is some module's name."""
    basenames = {path.name for path in SRC.rglob("*.py")}
    unknown = sorted(
        {
            name
            for name in _PY_NAME.findall(ROOMS.read_text(encoding="utf-8"))
            if not (
                (SRC / name).is_file()
                or (REPO / name).is_file()
                or ("/" not in name and name in basenames)
            )
        }
    )
    assert unknown == [], f"docs/rooms.md names files that do not exist: {', '.join(unknown)}"

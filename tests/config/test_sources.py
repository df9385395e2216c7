"""The names in our namespaces that are read outside the settings: every one is known, so
``executive doctor`` and the daemon's start never call one a typo."""

from __future__ import annotations

import re

from executive.config.sources import READ_ELSEWHERE
from executive.settings import variable_names
from tests.conftest import REPO

# Read from an environment in code: os.environ.get("X"), os.environ["X"], os.getenv("X").
_READ = re.compile(
    r"""(?:environ(?:\.get\(|\[)|getenv\()\s*["']((?:EXECUTIVE|V3)_[A-Z0-9_]+)["']"""
)
# Given a value where an operator sets one: `X=...` (shell, .env, systemd's Environment=, the
# Makefile) or `X: "..."` (ecosystem.config.js's env).
_SET = re.compile(r"""\b((?:EXECUTIVE|V3)_[A-Z0-9_]*[A-Z0-9])(?:=|["']?\s*:\s*["'])""")
# The pages that show a misspelling on purpose, and the misspellings they show.
TYPO_EXAMPLES = {"V3_MEM_HOOK_POSTRUN", "V3_MEM_HOOK_FAILDIAG"}


def _files():
    for folder in ("src", "deploy", "docs", "bench"):
        yield from (p for p in (REPO / folder).rglob("*") if p.is_file() and p.suffix != ".pyc")
    yield from (REPO / name for name in ("Makefile", "ecosystem.config.js", "README.md"))


def test_every_name_the_project_reads_or_sets_is_a_setting_or_read_elsewhere():
    read, given = set(), set()
    for path in _files():
        text = path.read_text(errors="replace")
        read |= set(_READ.findall(text))
        given |= set(_SET.findall(text))
    known = set(variable_names()) | set(READ_ELSEWHERE)
    assert read - known == set(), "read outside the settings: add to READ_ELSEWHERE"
    assert given - known - TYPO_EXAMPLES == set(), "set by a file of ours, read by nothing"
    # Every name listed is still read somewhere (a stale entry would hide a typo).
    assert set(READ_ELSEWHERE) <= read | given

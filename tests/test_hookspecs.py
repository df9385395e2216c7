"""The hooks' one declaration, and everything derived from it staying derived."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from executive.envfile import render_env
from executive.hookspecs import ROLL_OUT, SPECS, HookName, spec_of
from executive.settings import Settings, load_settings
from executive.workspace.scaffold import GO_LIVE

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "executive"

# The original's variable names: operators' files hold them, so they may never change.
ORIGINAL_FLAGS = {
    HookName.PRE_WORK: "V3_MEM_HOOK_PRE_WORK",
    HookName.PRE_SPAWN: "V3_MEM_HOOK_PRE_SPAWN",
    HookName.POST_RUN: "V3_MEM_HOOK_POST_RUN",
    HookName.FAIL_DIAG: "V3_MEM_HOOK_FAIL_DIAG",
    HookName.POST_RETRO: "V3_MEM_HOOK_POST_RETRO",
}

# A table between <!-- hooks-table... --> (in full) or <!-- hooks-table-brief... --> and
# <!-- /hooks-table -->.
_TABLE = re.compile(r"<!-- hooks-table(-brief)?\b[^>]*-->\n(.*?)<!-- /hooks-table -->", re.DOTALL)


def test_every_hook_is_declared_once_in_the_original_order_with_its_original_flag():
    assert list(SPECS) == list(HookName)
    assert [s.letter for s in SPECS.values()] == ["A", "B", "C", "D", "E"]
    assert {name: spec.flag for name, spec in SPECS.items()} == ORIGINAL_FLAGS
    assert sorted(ROLL_OUT) == sorted(HookName) and len(ROLL_OUT) == len(HookName)
    assert spec_of("post-run-harvest") is SPECS[HookName.POST_RUN]
    with pytest.raises(ValueError):
        spec_of("post-run")


@pytest.mark.parametrize("name", list(HookName))
def test_each_flag_is_a_settings_field_made_from_the_declaration(name, tmp_path, monkeypatch):
    spec = SPECS[name]
    info = Settings.model_fields[spec.field]
    assert info.validation_alias == spec.flag
    assert info.description == spec.description
    assert info.get_default() is False
    monkeypatch.setenv(spec.flag, "TRUE")
    settings = load_settings(tmp_path)
    assert getattr(settings, spec.field) is True
    assert settings.flag(spec.flag) is True
    others = [s.flag for s in SPECS.values() if s is not spec]
    assert not any(settings.flag(flag) for flag in others)


def test_the_env_template_lists_the_flags_in_roll_out_order_with_their_lines():
    lines = render_env().splitlines()
    for spec in SPECS.values():
        at = lines.index(f"{spec.flag}=false")
        assert lines[at - 1] == f"# {spec.description}"
    order = [line.split("=")[0] for line in lines if line.startswith("V3_MEM_HOOK_")]
    assert order == [SPECS[name].flag for name in ROLL_OUT]


def test_a_demo_home_starts_in_the_declared_go_live_state():
    assert GO_LIVE["V3_MEMORY_ENABLED"] == "true"
    for spec in SPECS.values():
        assert GO_LIVE[spec.flag] == ("true" if spec.go_live else "false")
    assert [s.letter for s in SPECS.values() if not s.go_live] == ["A"]  # audit only


def test_each_hook_has_its_skill_file():
    folder = resources.files("executive.hooks") / "skills"
    for spec in SPECS.values():
        assert (folder / f"{spec.skill}.md").is_file(), spec.skill
        assert (folder / f"{spec.downstream}.md").is_file(), spec.downstream


def test_no_module_but_the_declaration_names_a_hooks_flag():
    # What keeps the declaration the one place: a flag typed anywhere else in src/ fails here.
    spelled = {
        (path.relative_to(SRC).as_posix(), flag)
        for path in SRC.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
        for flag in ORIGINAL_FLAGS.values()
        if flag.encode() in path.read_bytes()
    }
    assert {where for where, _ in spelled} == {"hookspecs.py"}
    assert len(spelled) == len(ORIGINAL_FLAGS)


def hooks_table(*, brief: bool = False) -> str:
    """The hooks as a Markdown table, A to E: in full for docs/hooks.md, ``brief`` for the
    README. Regenerate: python -c "from tests.test_hookspecs import hooks_table as t; print(t())"
    (brief=True for the README's)."""
    rows = [
        f"| {s.letter} {s.name.value} | `{s.flag}` | {s.fires} | {s.brief if brief else s.does} |"
        for s in SPECS.values()
    ]
    return "\n".join(["| hook | flag | fires | does |", "|---|---|---|---|", *rows]) + "\n"


def test_the_docs_hooks_tables_are_the_ones_the_declaration_makes():
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    tables = [
        (page.relative_to(REPO).as_posix(), bool(match.group(1)), match.group(2).strip())
        for page in pages
        for match in _TABLE.finditer(page.read_text(encoding="utf-8"))
    ]
    assert {(page, brief) for page, brief, _ in tables} >= {
        ("README.md", True),
        ("docs/hooks.md", False),
    }, "a page lost its hooks table's markers"
    for page, brief, table in tables:
        assert table == hooks_table(brief=brief).strip(), f"{page}: its hooks table is out of date"

from __future__ import annotations

import pytest

from executive import reference
from executive.settings import Settings, variable_names
from tests.conftest import REPO


def test_the_committed_page_is_what_the_settings_write_now():
    page = (REPO / reference.PAGE).read_text(encoding="utf-8")
    assert page == reference.render(), (
        "docs/configuration.md is stale: run `.venv/bin/python -m executive.reference`"
    )


def test_every_variable_has_a_row_with_its_default():
    rows = [line for line in reference.render().splitlines() if line.startswith("| `")]
    named = {line.split("`")[1] for line in rows}
    assert named == {
        name for name in variable_names() if name not in ("AGENT_PATH", "EXECUTIVE_SNAPSHOT_COMMIT")
    }
    assert len(rows) == len(Settings.model_fields)
    by_name = {line.split("`")[1]: line for line in rows}
    assert "| flag | `false` |" in by_name["V3_MEM_HOOK_POST_RUN"]
    assert "| integer | `10` |" in by_name["MAX_RETRIES"]
    assert (
        "| one of `auto`, `sandbox`, `user`, `none` | `auto` |"
        in by_name["EXECUTIVE_WORKER_ISOLATION"]
    )
    assert "| secret | unset |" in by_name["V3_MEM0_API_KEY"]
    assert "(also `EXECUTIVE_SNAPSHOT_COMMIT`)" in by_name["EXECUTIVE_GIT_COMMIT"]


def test_a_cell_cannot_break_the_table_or_add_markup():
    assert reference._cell("a | b\n<home> *x*") == "a \\| b &lt;home&gt; \\*x\\*"


def test_a_type_without_words_is_an_error_naming_it():
    with pytest.raises(TypeError, match="complex"):
        reference._type_text(complex)


def test_main_writes_the_page_where_it_is_told(tmp_path, capsys):
    out = tmp_path / "configuration.md"
    reference.main(["--output", str(out)])
    assert out.read_text(encoding="utf-8") == reference.render()
    assert str(out) in capsys.readouterr().out

from __future__ import annotations

from executive.workers.claude_md import SLOT, render, template, write


def test_the_template_has_the_pack_slot():
    assert SLOT in template()


def test_the_pack_goes_at_the_slot_or_nothing_does(tmp_path):
    with_pack = render(
        output_dir=tmp_path,
        constitution="1. Never push.",
        goal="Do it.",
        pack="## Memory Pack\n\nx",
    )
    assert with_pack.rstrip().endswith("## Memory Pack\n\nx")
    assert "1. Never push." in with_pack and str(tmp_path) in with_pack
    without = render(output_dir=tmp_path, constitution="", goal="Do it.", pack=None)
    assert "Memory Pack" not in without and "{{" not in without
    assert render(output_dir=tmp_path, constitution="", goal="g", pack="  ") == without.replace(
        "Do it.", "g"
    )


def test_a_pack_cannot_fill_the_other_slots(tmp_path):
    text = render(
        output_dir=tmp_path, constitution="c", goal="g", pack="{{CONSTITUTION}} {{OUTPUT_DIR}}"
    )
    assert "{{CONSTITUTION}} {{OUTPUT_DIR}}" in text


def test_write_rewrites_only_when_changed(tmp_path):
    path = write(tmp_path, "one")
    before = path.stat().st_mtime_ns
    write(tmp_path, "one")
    assert path.stat().st_mtime_ns == before
    write(tmp_path, "two")
    assert path.read_text() == "two"

"""needs-you.md: entries appended, and marked resolved when their bundle completes or is
retried, so what is open reads apart from what is done."""

from __future__ import annotations

import re

from executive.workspace.needs_you import RESOLVED, add_entry, resolve


def test_an_entry_about_a_bundle_is_marked_resolved_and_kept_whole(tmp_path):
    path = tmp_path / "needs-you.md"
    path.write_text("# Needs you\n\nA person's own note: blocked: a\n")
    add_entry(path, "blocked: a", ["the mirror is down"])
    add_entry(path, "blocked: a-2", ["another bundle"])
    add_entry(path, "cancelled: a", ["cancelled by the operator"])
    assert resolve(path, "a", "retried") == 2
    text = path.read_text()
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert re.fullmatch(rf"## \S+Z · {RESOLVED} \S+Z, retried · blocked: a", headings[0])
    assert headings[1].endswith(" · blocked: a-2") and RESOLVED not in headings[1]
    assert re.fullmatch(rf"## \S+Z · {RESOLVED} \S+Z, retried · cancelled: a", headings[2])
    # The entries stay, and so does what a person wrote; nothing is resolved twice.
    assert "- the mirror is down" in text and "A person's own note: blocked: a\n" in text
    assert resolve(path, "a", "completed") == 0
    assert resolve(tmp_path / "missing.md", "a", "completed") == 0

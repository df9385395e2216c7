from __future__ import annotations

from executive.home import Home
from executive.workspace.lifecycle import Workspace
from executive.workspace.state import read_state
from tests.loop.homes import add_bundle, make_home


def test_ingest_promotes_by_priority_and_selection_is_priority_then_age(tmp_path):
    home = make_home(tmp_path)
    add_bundle(home, "later", "true\n", priority="P3")
    add_bundle(home, "urgent", "true\n", priority="P0")
    add_bundle(home, "also-urgent", "true\n", priority="P0")
    workspace = Workspace(Home(home), "command")
    promoted = workspace.ingest()
    assert {a.bundle.folder.parent.name for a in promoted} == {"P0", "P3"}
    assert workspace.select().bundle.slug == "urgent"  # P0 and queued first
    assert (
        read_state(home / "workspace" / "in-progress" / "P3" / "later").steps[0].status == "pending"
    )


def test_a_slug_clash_is_quarantined_not_overwritten(tmp_path):
    home = make_home(tmp_path)
    add_bundle(home, "same", "true\n")
    workspace = Workspace(Home(home), "command")
    workspace.ingest()
    add_bundle(home, "same", "true\n")
    assert workspace.ingest() == []
    # Kept under a name no bundle has, so show and retry reach this copy, not the other.
    assert (home / "workspace" / "blocked" / "same-2").is_dir()
    assert not (home / "workspace" / "blocked" / "same").exists()
    needs_you = (home / "workspace" / "needs-you.md").read_text()
    assert "name in use: same" in needs_you
    assert "already exists at workspace/in-progress/P3/same" in needs_you
    assert "bundle retry same-2" in needs_you and "move the folder back" not in needs_you
    from executive.workspace import operator

    operator.retry(Home(home), "same-2")
    [active] = workspace.ingest()
    assert active.bundle.slug == "same-2"
    assert "RESOLVED" in (home / "workspace" / "needs-you.md").read_text()
    workspace.complete(active)  # nothing left open about it


def test_a_bundle_whose_prompt_breaks_in_progress_is_quarantined(tmp_path):
    home = make_home(tmp_path)
    add_bundle(home, "edited", "true\n")
    workspace = Workspace(Home(home), "command")
    [active] = workspace.ingest()
    (active.bundle.folder / "PROMPT.md").write_text("---\ntitle: x\npriority: nope\n---\n")
    assert workspace.select() is None
    assert (home / "workspace" / "blocked" / "edited" / "STEPS.json").exists()


def test_an_oversized_step_is_flagged_for_a_person_and_still_runs(tmp_path):
    home = make_home(tmp_path)
    add_bundle(
        home, "big", "true\n", steps=[{"title": "Small"}, {"title": "Huge", "estimated_turns": 250}]
    )
    workspace = Workspace(Home(home), "command", breakdown_turns=100)
    assert len(workspace.ingest()) == 1
    needs_you = (home / "workspace" / "needs-you.md").read_text()
    assert "oversized steps: big" in needs_you
    assert (
        "step 2 “Huge” is estimated at 250 turns, over BREAKDOWN_THRESHOLD_TURNS (100)" in needs_you
    )
    assert workspace.select().bundle.slug == "big"


def test_a_bundle_that_completes_has_its_needs_you_entries_resolved(tmp_path):
    from executive.workspace.needs_you import add_entry

    home = make_home(tmp_path)
    add_bundle(home, "moved-back", "true\n")
    needs_you = home / "workspace" / "needs-you.md"
    add_entry(needs_you, "malformed bundle: moved-back", ["fixed by hand since"])
    workspace = Workspace(Home(home), "command")
    [active] = workspace.ingest()
    workspace.complete(active)
    [heading] = [x for x in needs_you.read_text().splitlines() if x.endswith(": moved-back")]
    assert "RESOLVED" in heading and ", completed · malformed bundle: moved-back" in heading

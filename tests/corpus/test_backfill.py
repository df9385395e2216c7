from __future__ import annotations

import pytest

from executive.corpus import backfill
from executive.workspace.ledger import WorkLedger
from executive.workspace.retrospective import Lesson, Retrospective
from executive.workspace.state import BundleState, StepState, write_state

pytestmark = pytest.mark.anyio

CAPABILITIES = """
capabilities:
  - name: static site build
    status: Reliable
    summary: Builds a static HTML/CSS page from a goal in under two minutes.
    evidence: [demo-greeting]
  - name: release notes fetch
    status: Demonstrated
    summary: Fetches release notes through a flaky mirror with one retry.
  - name: deploy to prod
    status: Proposed
    summary: Not yet tried.
"""


@pytest.fixture
def corpus(settings):
    home = settings.home
    retro = home / "learning" / "retrospectives" / "retro-2026-11-30.md"
    retro.write_text(
        Retrospective(
            date="2026-11-30",
            period="p",
            summary="s",
            lessons=[
                Lesson(
                    "pattern",
                    "flaky-fetch",
                    "flaky-fetch failed 3 times with “econnreset” (runs c1, c2, c3).",
                ),
                Lesson(
                    "fact",
                    "greeting",
                    "The greeting verifier needs index.html at the top of the output folder.",
                ),
                Lesson(
                    "steps",
                    "greeting",
                    "To complete “Greeting” (bundle greeting): 1. Write the page; 2. Add the stylesheet.",
                ),
                Lesson("rule", "_global", "Always retry fetches twice."),
            ],
        ).render()
    )
    (home / "capabilities.yml").write_text(CAPABILITIES)
    ledger = WorkLedger(home / "ledgers" / "work-ledger.jsonl")
    for slug in ("greeting", "notes"):
        folder = home / "workspace" / "completed" / slug
        folder.mkdir(parents=True)
        (folder / "PROMPT.md").write_text(f"---\ntitle: {slug}\ncommand: x\n---\nx\n")
        write_state(
            folder,
            BundleState(
                slug=slug,
                title=slug.title(),
                priority="P2",
                status="completed",
                finished_at="2026-11-29T10:00:00+00:00",
                steps=[StepState(number=1, title="Do it", status="done")],
            ),
        )
        ledger.append("STEP_STARTED", bundle=slug, vendor="command")
        ledger.append("GOAL_COMPLETED", bundle=slug)
    ledger.append("STEP_FAILED", bundle="notes", step=1)
    return ledger


async def run(runtime, ledger, **kwargs):
    return await backfill.run(
        await runtime.harvester(), await runtime.view(), runtime.home, ledger, **kwargs
    )


async def test_backfill_produces_every_lane_and_run_twice_writes_nothing_new(runtime, corpus):
    first = await run(runtime, corpus)
    assert first["ok"]
    written = {lane: summary["written"] for lane, summary in first["lanes"].items()}
    assert written == {"A": 7, "B": 3, "C": 2, "D": 2}
    records = await (await runtime.view()).list()
    by_type = {}
    for r in records:
        by_type.setdefault(r.type, []).append(r)
    assert len(by_type["principle"]) == 7 and all(
        r.metadata["immutable"] for r in by_type["principle"]
    )
    assert {r.app_id for r in by_type["episodic"]} == {"greeting", "notes"}
    caps = [
        r for r in by_type["semantic"] if "capability-snapshot" in (r.metadata.get("tags") or [])
    ]
    assert {r.app_id for r in caps} == {"_skill-static-site-build", "_skill-release-notes-fetch"}
    assert all(r.metadata["expires_at"].startswith("20") for r in caps)
    assert "not proven" in " ".join(first["lanes"]["C"]["notes"])

    second = await run(runtime, corpus)
    assert sum(s["written"] for s in second["lanes"].values()) == 0
    assert len(await (await runtime.view()).list()) == len(records)


async def test_a_dry_run_prints_stamped_payloads_and_writes_nothing(runtime, corpus):
    report = await run(runtime, corpus, lanes=["A", "B"], dry_run=True)
    assert report["dry_run"] and set(report["lanes"]) == {"A", "B"}
    payloads = report["lanes"]["A"]["payloads"]
    assert (
        len(payloads) == 7 and payloads[0]["metadata"]["key"] and payloads[0]["immutable"] is True
    )
    assert await (await runtime.view()).count() == 0


async def test_lane_a_prunes_a_rule_removed_from_the_constitution(runtime, corpus):
    await run(runtime, corpus, lanes=["A"])
    constitution = runtime.home.constitution
    constitution.write_text(
        constitution.read_text().replace("3. Never expose", "3. Always avoid exposing")
    )
    report = await run(runtime, corpus, lanes=["A"])
    assert report["lanes"]["A"]["written"] == 1 and report["lanes"]["A"]["pruned"] == 1
    principles = await (await runtime.view()).list()
    assert len(principles) == 7 and not any("Never expose" in p.text for p in principles)


async def test_unknown_lanes_are_refused(runtime, corpus):
    with pytest.raises(ValueError, match="unknown lane"):
        await run(runtime, corpus, lanes=["E"])

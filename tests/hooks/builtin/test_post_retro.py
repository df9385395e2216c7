from __future__ import annotations

import pytest

from executive.hooks.context import PostRetroContext
from executive.hooks.runner import run_memory_hook
from executive.workspace.retrospective import Lesson, Retrospective

pytestmark = pytest.mark.anyio

RETRO = Retrospective(
    date="2026-12-02",
    period="2026-11-25 to 2026-12-02",
    summary="Outcomes: 4 (3 completed, 1 blocked)",
    outcomes=["- completed: greeting-page “Build the greeting page”"],
    failures=["- `error: econnreset while fetching mirror` — 3 failures in flaky-fetch"],
    lessons=[
        Lesson(
            "pattern",
            "flaky-fetch",
            "Bundle flaky-fetch fails with ECONNRESET on its first attempt and passes on retry (runs contract-1, contract-4).",
        ),
        Lesson(
            "fact",
            "greeting-page",
            "The greeting-page verifier output_exists:index.html needs index.html at the top of the output folder.",
        ),
        Lesson(
            "steps",
            "greeting-page",
            "To build the greeting page: 1. write index.html; 2. add style.css and link it; 3. grep for the heading.",
        ),
        Lesson("rule", "_global", "Always retry network fetches twice before blocking a bundle."),
    ],
)


@pytest.fixture
def retro(settings):
    path = settings.home / "learning" / "retrospectives" / "retro-2026-12-02.md"
    path.write_text(RETRO.render())
    return PostRetroContext(
        retro_path="learning/retrospectives/retro-2026-12-02.md",
        harvest_run="2026-12-02-retro-weekly",
    )


async def test_e_turns_lessons_into_typed_memories_and_writes_nothing_new_when_run_again(
    env, runtime, retro
):
    first = await run_memory_hook("post-retro-harvest", retro, env)
    assert first.outcome == "ok", first.error
    assert first.writes.succeeded == 3
    records = await (await runtime.view()).list()
    by_type = {r.type: r for r in records}
    assert set(by_type) == {"reflective", "semantic", "procedural"}
    assert by_type["reflective"].app_id == "flaky-fetch"
    assert by_type["semantic"].metadata["confidence"] >= 0.85
    assert by_type["procedural"].metadata["source"] == retro.retro_path
    assert all(r.metadata["trigger"] == "post-retro" for r in records)
    assert "proposed rule" in first.final_text  # the rule was skipped, and said so

    second = await run_memory_hook("post-retro-harvest", retro, env)
    assert second.outcome == "ok"
    assert second.writes.succeeded == 0
    assert len(await (await runtime.view()).list()) == 3


async def test_a_per_run_retro_is_held_to_its_budget(env, runtime, settings):
    many = Retrospective(
        date="2026-12-03",
        period="one run",
        summary="per-run",
        lessons=[
            Lesson("fact", "_global", f"Fact number {i}: tool {i} needs flag --x{i}.")
            for i in range(6)
        ],
    )
    path = settings.home / "learning" / "retrospectives" / "retro-2026-12-03.md"
    path.write_text(many.render())
    ctx = PostRetroContext(
        retro_path=str(path.relative_to(settings.home)),
        retro_type="per-run",
        harvest_run="2026-12-03-retro-run",
    )
    result = await run_memory_hook("post-retro-harvest", ctx, env)
    assert result.writes.attempted == 3
    assert result.final_text.count("over the per-run budget") == 3


async def test_a_fix_a_run_showed_becomes_a_lesson_and_e_writes_it_with_its_files(
    env, runtime, settings
):
    from executive.home import Home
    from executive.loop import contexts, retro
    from executive.workers.record.experience import brief
    from tests.hooks.builtin.test_post_run import _experience

    ledger = env.work_ledger
    ledger.append(
        "STEP_COMPLETED",
        bundle="weather",
        step=1,
        step_title="Parse the feed",
        contract_id="contract-9",
        attempts=1,
        experience=brief(_experience()),
    )
    document = retro.build(ledger, "")
    assert "- weather step 1 (run contract-9): changed src/weather/parser.py" in document.changes
    [lesson] = [x for x in document.lessons if x.kind == "steps"]
    assert lesson.scope == "weather" and "`PYTHONPATH=src python -m pytest -q`" in lesson.text
    rendered = document.render()
    assert "## What the runs changed" in rendered
    path = retro.write(Home(settings.home), document)

    context = PostRetroContext(
        retro_path=str(path.relative_to(settings.home)),
        harvest_run=f"{document.date}-retro-weekly",
        experiences=contexts.run_experiences(ledger, ""),
    )
    assert [r.contract_id for r in context.experiences] == ["contract-9"]
    result = await run_memory_hook("post-retro-harvest", context, env)
    assert result.outcome == "ok", result.error
    [written] = [r for r in await (await runtime.view()).list() if r.type == "procedural"]
    assert written.metadata["files"] == ["src/weather/parser.py"]
    assert written.app_id == "weather"

from __future__ import annotations

import pytest

from executive.hooks.context import PreWorkContext, WorkItem
from executive.hooks.runner import run_memory_hook
from tests.hooks.conftest import fail_diag, post_run

pytestmark = pytest.mark.anyio


def item(slug: str) -> WorkItem:
    return WorkItem(id=slug, title=f"Work on {slug}", bundle_slug=slug, app_id=slug)


async def test_a_synthesis_advises_per_bundle_and_is_audit_only(env):
    # greeting-page has a success on record; flaky has a recorded failure pattern.
    await run_memory_hook("post-run-harvest", post_run(), env)
    error = "error: ECONNRESET while fetching mirror 10.0.0.{}"
    flaky = fail_diag(
        3, [("contract-1", error.format(1)), ("contract-2", error.format(2))], error.format(3)
    )
    flaky = flaky.model_copy(update={"work_item": item("flaky")})
    await run_memory_hook("failure-diagnosis", flaky, env)

    ctx = PreWorkContext(
        queued=[item("flaky"), item("greeting-page"), item("brand-new")], picked="flaky"
    )
    result = await run_memory_hook("pre-work-selection", ctx, env)
    assert result.outcome == "ok", result.error
    verdicts = result.details["verdicts"]
    assert verdicts == {
        "flaky": "avoid",
        "greeting-page": "prefer",
        "brand-new": "proceed with caution",
    }
    assert result.details["memory_pick"] == "greeting-page"
    assert result.details["picked"] == "flaky"
    assert "## Memory consultation: work selection" in result.final_text
    assert "Queries issued:" in result.final_text and "Memories surfaced:" in result.final_text
    assert result.writes.attempted == 0

from __future__ import annotations

import json

import pytest

from executive.hooks.builtin.post_run import decide
from executive.hooks.context import ValidationReport, VerifierReport
from executive.hooks.runner import run_memory_hook
from tests.conftest import run_cli
from tests.hooks.conftest import post_run

pytestmark = pytest.mark.anyio


async def test_c_writes_one_episodic_that_a_new_process_finds(env, runtime):
    result = await run_memory_hook("post-run-harvest", post_run(), env)
    assert result.outcome == "ok", result.error
    assert (result.writes.attempted, result.writes.succeeded) == (1, 1)
    await runtime.close()  # release the embedded store for the other process

    found = run_cli(
        "--home",
        str(env.settings.home),
        "mem",
        "search",
        "--json",
        "--type",
        "episodic",
        "--app-id",
        "greeting-page",
        "--query",
        "What happened when the greeting page bundle last ran?",
        env={"V3_MEMORY_ENABLED": "true"},
        process=True,
    )
    assert found.returncode == 0, found.stderr
    [hit] = json.loads(found.stdout)["results"]
    assert "2026-12-02-greeting-page-abc123" in hit["text"]
    assert hit["metadata"]["outcome"] == "success" and hit["metadata"]["worker_vendor"] == "command"
    assert hit["run_id"] == "2026-12-02-greeting-page-abc123"


def test_a_plain_success_is_one_episodic():
    payloads, _ = decide(post_run())
    assert [p["metadata"]["type"] for p in payloads] == ["episodic"]


def test_signals_add_semantic_and_procedural_memories_up_to_three():
    ctx = post_run(
        duration_seconds=45.0,  # estimated 10 s
        attempts=3,
        prior_errors=["boom", "error: ECONNRESET while fetching mirror 10.0.0.7:443"],
        validation_report=ValidationReport(
            passed=True,
            verifiers=[
                VerifierReport(verifier="lint", result="PASS", message="warning: 3 style nits left")
            ],
        ),
    )
    payloads, _ = decide(ctx)
    assert [p["metadata"]["type"] for p in payloads] == ["episodic", "semantic", "semantic"]
    ctx = post_run(
        attempts=2, prior_errors=["error: ECONNRESET while fetching mirror 10.0.0.7:443"]
    )
    payloads, _ = decide(ctx)
    assert [p["metadata"]["type"] for p in payloads] == ["episodic", "procedural"]
    assert "econnreset while fetching mirror <n>.<n>" in payloads[1]["text"]


def test_a_trivial_run_writes_nothing():
    payloads, notes = decide(
        post_run(validation_report=ValidationReport(passed=True), output_changed=False)
    )
    assert payloads == [] and "trivial" in notes[0]


async def test_running_c_twice_on_the_same_run_stores_it_once(env, runtime):
    await run_memory_hook("post-run-harvest", post_run(), env)
    again = await run_memory_hook("post-run-harvest", post_run(), env)
    assert (again.writes.succeeded, again.writes.skipped) == (0, 1)
    assert again.outcome == "ok"
    assert await (await runtime.view()).count() == 1

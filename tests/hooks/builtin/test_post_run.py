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


# --- from what the worker did ------------------------------------------------------------------
def _experience():
    from executive.workers import runlog
    from executive.workers.experience import digest, within
    from tests.workers import records

    return digest(runlog.read_lines(records.fixed_run("/out")), relative=within("/out"))


def test_the_episode_says_what_was_done_and_where_and_a_fix_is_a_procedural_lesson():
    payloads, _ = decide(post_run(vendor="claude", experience=_experience()))
    episode, fix = payloads
    assert episode["metadata"]["files"] == ["src/weather/parser.py"]
    assert "created src/weather/parser.py" in episode["text"]
    assert "Tests: `PYTHONPATH=src python -m pytest -q` (2 passed)" in episode["text"]
    assert "The worker's account: “I wrote src/weather/parser.py" in episode["text"]
    assert fix["metadata"]["type"] == "procedural" and fix["metadata"]["files"] == [
        "src/weather/parser.py"
    ]
    assert fix["text"] == (
        "In bundle greeting-page (step 1 “Write the page”), when `python -m pytest -q` fails "
        "with “ModuleNotFoundError: No module named 'weather'”: change src/weather/parser.py, "
        "then run `PYTHONPATH=src python -m pytest -q`. That made it pass."
    )
    assert "fix" in fix["metadata"]["tags"] and any(
        t.startswith("sig-") for t in fix["metadata"]["tags"]
    )
    # No run id in a lesson: the same fix from another run is the same memory.
    assert "2026-12-02-greeting-page-abc123" not in fix["text"]


def test_a_retry_that_changed_files_is_a_fix_and_one_that_changed_nothing_is_retry_it():
    from executive.workers.experience import Experience, FileChange

    changed = Experience(source="stream-json", files=[FileChange(path="app.py", change="modified")])
    payloads, _ = decide(
        post_run(attempts=2, prior_errors=["Traceback\nKeyError: 'city'"], experience=changed)
    )
    assert [p["metadata"]["type"] for p in payloads] == ["episodic", "procedural"]
    assert payloads[1]["text"].startswith(
        "When bundle greeting-page (step 1 “Write the page”) fails with “KeyError: 'city'”: "
        "change app.py."
    )
    unchanged = Experience(source="stream-json")
    payloads, _ = decide(post_run(attempts=2, prior_errors=["boom"], experience=unchanged))
    assert "retry it" in payloads[1]["text"]
    # A command runs the same way every attempt: what it wrote is its work, not a fix.
    same = Experience(source="command", files=[FileChange(path="out.txt", change="created")])
    payloads, _ = decide(post_run(attempts=2, prior_errors=["boom"], experience=same))
    assert "retry it" in payloads[1]["text"]


def test_at_most_three_writes_and_the_rest_is_noted():
    ctx = post_run(
        vendor="claude",
        experience=_experience(),
        duration_seconds=45.0,
        validation_report=ValidationReport(
            passed=True,
            verifiers=[VerifierReport(verifier="lint", result="PASS", message="note: slow disk")],
        ),
    )
    payloads, notes = decide(ctx)
    assert [p["metadata"]["type"] for p in payloads] == ["episodic", "procedural", "semantic"]
    assert len(notes) == 1 and notes[0].startswith("over the 3-write limit")


async def test_a_later_run_changing_a_file_marks_its_memories_possibly_outdated(env, runtime):
    first = await run_memory_hook(
        "post-run-harvest", post_run(vendor="claude", experience=_experience()), env
    )
    assert first.writes.succeeded == 2, first.error
    later = post_run(
        vendor="claude",
        harvest_run="2026-12-03-greeting-page-def456",
        experience=_experience(),
    )
    second = await run_memory_hook("post-run-harvest", later, env)
    assert second.outcome == "ok", second.error
    # The first run's episode is marked; its lesson, which the later run said again, is not.
    assert "marked 1 earlier memories possibly outdated" in second.final_text
    view = await runtime.view()
    earlier = {
        m.type: m for m in await view.list() if m.run_id == "2026-12-02-greeting-page-abc123"
    }
    assert earlier["episodic"].metadata["outdated_by"] == "2026-12-03-greeting-page-def456"
    assert earlier["episodic"].metadata["outdated_files"] == ["src/weather/parser.py"]
    assert "outdated_by" not in earlier["procedural"].metadata
    assert second.histogram["memory.update"] == 1
    # Marked, never deleted, and the ledger has it for a rebuild.
    ledger = (env.settings.home / "ledgers" / "harvest-runs").glob("*.jsonl")
    updates = [line for f in ledger for line in f.read_text().splitlines() if '"update"' in line]
    assert any("outdated_by" in u for u in updates if "PENDING" in u)
    assert any("SUCCEEDED" in u for u in updates)

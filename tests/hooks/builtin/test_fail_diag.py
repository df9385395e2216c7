from __future__ import annotations

import pytest

from executive.hooks.runner import run_memory_hook
from executive.memory.store.base import Filter
from tests.hooks.conftest import fail_diag

pytestmark = pytest.mark.anyio

ERR = "error: ECONNRESET while fetching mirror 10.0.0.{n}"


async def reflective(runtime) -> list:
    return await (await runtime.view()).list(Filter(types=("reflective",)))


async def test_d_writes_nothing_on_a_first_failure(env, runtime):
    result = await run_memory_hook("failure-diagnosis", fail_diag(1, []), env)
    assert result.outcome == "ok", result.error
    assert result.writes.attempted == 0
    assert "Escalation: no" in result.final_text
    assert await reflective(runtime) == []


async def test_d_writes_one_reflective_after_three_similar_failures_and_not_again(env, runtime):
    prior = [("contract-1", ERR.format(n=1)), ("contract-2", ERR.format(n=2))]
    third = await run_memory_hook("failure-diagnosis", fail_diag(3, prior, ERR.format(n=3)), env)
    assert third.outcome == "ok", third.error
    assert third.writes.succeeded == 1
    [memory] = await reflective(runtime)
    assert "contract-1" in memory.text and "contract-2" in memory.text
    assert memory.metadata["trigger"] == "failure-diagnosis"
    assert "Escalation: no" in third.final_text

    fourth = await run_memory_hook(
        "failure-diagnosis",
        fail_diag(4, [*prior, ("contract-3", ERR.format(n=3))], ERR.format(n=4)),
        env,
    )
    assert fourth.writes.attempted == 0
    assert "Escalation: yes" in fourth.final_text
    assert len(await reflective(runtime)) == 1


async def test_different_root_signals_are_not_a_pattern(env, runtime):
    prior = [("contract-1", "error: disk full"), ("contract-2", "permission denied")]
    result = await run_memory_hook("failure-diagnosis", fail_diag(3, prior), env)
    assert result.writes.attempted == 0
    assert await reflective(runtime) == []


async def test_d_names_what_the_failing_attempts_tried_and_what_fixed_it_before(env, runtime):
    from executive.hooks.context import PriorAttempt
    from executive.workers.record.experience import Command, Experience, FileChange
    from tests.hooks.builtin.test_post_run import _experience
    from tests.hooks.conftest import post_run

    # An earlier run of the project fixed a ModuleNotFoundError (Hook C wrote the lesson).
    earlier = await run_memory_hook(
        "post-run-harvest", post_run(vendor="claude", experience=_experience()), env
    )
    assert earlier.writes.succeeded == 2, earlier.error

    error = "the worker exited with code 1:\nModuleNotFoundError: No module named 'weather'"
    tried = Experience(
        source="stream-json",
        files=[FileChange(path="setup.cfg", change="modified")],
        commands=[
            Command(
                command="pip install weather",
                exit_code=1,
                failed=True,
                error="ERROR: No matching distribution found for weather",
            )
        ],
    )
    ctx = fail_diag(3, [("contract-1", error), ("contract-2", error)], error)
    ctx = ctx.model_copy(
        update={
            "experience": tried,
            "prior_attempts": [
                PriorAttempt(run_id="contract-1", attempt=1, error=error, experience=tried),
                PriorAttempt(run_id="contract-2", attempt=2, error=error),
            ],
        }
    )
    result = await run_memory_hook("failure-diagnosis", ctx, env)
    assert result.outcome == "ok", result.error
    text = result.final_text
    assert "What the failing attempts tried:" in text
    assert (
        "- attempt 1: changed setup.cfg; ran `pip install weather`, which failed with "
        "“ERROR: No matching distribution found for weather”." in text
    )
    assert "- attempt 2: no record of what it did" in text
    assert "What fixed this failure before:" in text and "PYTHONPATH=src" in text
    [pattern] = await reflective(runtime)
    assert pattern.metadata["files"] == ["setup.cfg"]

from __future__ import annotations

import pytest

from executive.hooks.runner import run_memory_hook
from executive.memory.read.pack import HEADING
from tests.hooks.conftest import pre_spawn
from tests.memory.payloads import partial

pytestmark = pytest.mark.anyio


async def test_b_returns_a_pack_that_holds_a_principle_written_earlier(env, runtime):
    harvester = await runtime.harvester()
    principle = partial("principle")
    await harvester.add([principle, partial("semantic", app_id="greeting-page")], principles=True)
    result = await run_memory_hook("pre-spawn-pack", pre_spawn(), env)
    assert result.outcome == "ok", result.error
    pack = result.memory_pack
    assert pack.startswith(HEADING)
    assert "### [principle]" in pack
    assert principle["text"] in pack
    assert "memory.search" in result.tool_calls
    assert set(result.tool_calls) <= {"memory.search", "memory.words"}  # words: the BM25 index
    asked = result.details["trace"]["questions"]
    assert 2 <= len(asked) <= 8
    # The rules that apply are asked last, of the global scope only.
    assert asked[-1]["why"] == "closing" and set(asked[-1]["returned"]) == {"global"}


async def test_an_empty_store_gives_an_empty_pack_that_lists_its_questions(env):
    result = await run_memory_hook("pre-spawn-pack", pre_spawn(), env)
    assert result.outcome == "ok"
    assert "No prior memories surfaced" in result.memory_pack
    assert "Build the greeting page" in result.memory_pack


async def test_test_env_memories_never_reach_a_pack(env, runtime):
    harvester = await runtime.harvester()
    await harvester.add([partial("principle", metadata={"env": "test"})], principles=True)
    result = await run_memory_hook("pre-spawn-pack", pre_spawn(), env)
    assert "### [principle]" not in result.memory_pack

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


# --- the relevance floor -----------------------------------------------------------------------
def _memory(n: int, score: float, *, files: list[str] | None = None, kind: str = "episodic"):
    from executive.memory.store.base import MemoryRecord

    meta = {"type": kind, "confidence": 1.0, "trigger": "post-run"}
    meta |= {"files": files} if files else {}
    return MemoryRecord(id=f"m{n}", text=f"memory {n}", app_id="a", metadata=meta, score=score)


def test_in_a_read_of_coding_work_every_memory_is_judged_against_the_best():
    from executive.hooks.builtin.pre_spawn import CODE_BELOW_BEST, CODE_FIRST, relevant
    from executive.memory.read.reading import ReadResult

    result = ReadResult(memories=[], relevant={"m9"}, promoted={"m7"})
    best = 0.6
    code = ["app/parser.py"]
    assert relevant(_memory(1, 0.1, files=code), result, CODE_FIRST - 1, best, True)  # first
    assert relevant(_memory(7, 0.1, files=code), result, 9, best, True)  # the best one's files
    assert relevant(_memory(2, best - CODE_BELOW_BEST, files=code), result, 9, best, True)
    # Past those, a memory stops the pack, corroborated or not, however much room is left,
    # whether it names a file or not: in a coding read a lone lesson is judged the same way.
    assert not relevant(_memory(9, 0.3, files=code), result, 9, best, True)
    assert not relevant(_memory(3, 0.3, kind="procedural"), result, 9, best, True)
    assert relevant(_memory(5, 0.0, kind="principle"), result, 9, best, True)


def test_in_any_other_read_the_floor_is_corroboration_or_similarity():
    from executive.hooks.builtin.pre_spawn import PACK_MIN_SCORE, relevant
    from executive.memory.read.reading import ReadResult

    result = ReadResult(memories=[], relevant={"m9"}, promoted=set())
    assert relevant(_memory(9, 0.1), result, 9, 0.9)  # corroborated
    assert relevant(_memory(3, PACK_MIN_SCORE), result, 9, 0.9)
    assert not relevant(_memory(4, PACK_MIN_SCORE - 0.05), result, 9, 0.9)
    assert relevant(_memory(5, 0.0, kind="principle"), result, 9, 0.9)


def test_a_pack_holds_one_card_of_each_past_run():
    from executive.hooks.builtin.pre_spawn import one_card_a_run

    run = {"run_id": "2026-12-01-app-abc"}
    ranked = [
        _memory(1, 0.6).model_copy(update=run),
        _memory(2, 0.5).model_copy(update=run),  # a second card of the same run
        _memory(3, 0.4, kind="procedural").model_copy(update=run),  # its lesson stays
        _memory(4, 0.3).model_copy(update={"run_id": "2026-12-02-app-def"}),
    ]
    assert [m.id for m in one_card_a_run(ranked)] == ["m1", "m3", "m4"]
    # Episodes that are not a run's card (a conversation's turns share its run id) all stay.
    chat = {"run_id": "2026-12-01-chat", "metadata": {"type": "episodic", "confidence": 1.0}}
    turns = [_memory(n, 0.5).model_copy(update=chat) for n in (5, 6)]
    assert one_card_a_run(turns) == turns

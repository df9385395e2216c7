from __future__ import annotations

import json

import pytest

from executive.memory.store.base import Filter, NewMemory, WriteReceipt
from executive.memory.write.classify import Rejected
from executive.memory.write.harvester import Harvester
from tests.memory.faults import FaultyStore
from tests.memory.payloads import DEFAULTS, partial

pytestmark = pytest.mark.anyio


def ledger_lines(ledger) -> list[dict]:
    return [json.loads(line) for path in ledger.files() for line in path.read_text().splitlines()]


async def test_the_same_payload_twice_is_stored_once(harvester, store, ledger):
    first = await harvester.add([partial("semantic")])
    second = await harvester.add([partial("semantic")])
    assert (first.succeeded, second.succeeded, second.skipped) == (1, 0, 1)
    assert second.results[0].status == "DUPLICATE"
    assert second.results[0].memory_id == first.results[0].memory_id
    assert await store.count() == 1
    assert ledger.state().pending() == []


async def test_a_near_duplicate_of_the_same_type_and_scope_is_skipped(harvester, store):
    await harvester.add([partial("semantic")])
    again = partial(
        "semantic",
        text=partial("semantic")["text"].replace("on first contact", "on first contact!"),
    )
    result = await harvester.add([again])
    assert result.skipped == 1
    other_scope = await harvester.add([partial("semantic", app_id="other-bundle")])
    assert other_scope.succeeded == 1
    assert await store.count() == 2


async def test_every_write_is_in_the_ledger_before_the_caller_hears_back(harvester, ledger):
    summary = await harvester.add([partial("episodic"), partial("principle")], principles=True)
    lines = ledger_lines(ledger)
    assert [(line["status"], line["key"]) for line in lines] == [
        ("PENDING", summary.results[0].key),
        ("SUCCEEDED", summary.results[0].key),
        ("PENDING", summary.results[1].key),
        ("SUCCEEDED", summary.results[1].key),
    ]
    assert lines[0]["payload"]["metadata"]["type"] == "episodic"
    assert lines[1]["memory_id"] == summary.results[0].memory_id
    assert "ms" in lines[1]


async def test_a_batch_with_one_bad_item_writes_nothing(harvester, store, ledger):
    with pytest.raises(Rejected) as caught:
        await harvester.add(
            [partial("episodic"), partial("semantic", metadata={"confidence": 0.2})]
        )
    assert "[1].metadata.confidence" in str(caught.value)
    assert await store.count() == 0
    assert [line["status"] for line in ledger_lines(ledger)] == ["REJECTED"]


async def test_the_empty_cohort_case_never_reaches_the_store_as_blank(harvester, store):
    summary = await harvester.add([partial("episodic")])
    record = await store.get(summary.results[0].memory_id)
    assert "cohort" not in record.metadata


async def test_a_failing_store_leaves_the_write_pending_and_replay_lands_it_once(store, ledger):
    faulty = FaultyStore(store)
    harvester = Harvester(faulty, ledger, DEFAULTS, timeout_seconds=5)
    faulty.mode = "raise"
    summary = await harvester.add([partial("episodic"), partial("semantic")])
    assert summary.failed == 2 and not summary.ok
    assert {r.status for r in summary.results} == {"ERROR"}
    assert len(ledger.state().pending()) == 2
    assert (await harvester.replay())["still_pending"] == 2  # still down
    faulty.mode = None
    assert await harvester.replay() == {"pending": 2, "confirmed": 2, "still_pending": 0}
    assert ledger.state().pending() == []
    assert await harvester.replay() == {"pending": 0, "confirmed": 0, "still_pending": 0}
    assert await store.count() == 2


async def test_a_write_that_landed_but_was_never_confirmed_replays_as_a_no_op(store, ledger):
    harvester = Harvester(store, ledger, DEFAULTS)
    payload = harvester.prepare([partial("episodic")])[0]
    # Simulate a kill after the store call, before the result line: PENDING only.
    ledger.record(
        {
            "op": "add",
            "attempt": "killed",
            "key": payload.key,
            "status": "PENDING",
            "payload": payload.as_dict(),
        }
    )
    await store.add(
        NewMemory(
            payload.text,
            {"user_id": payload.user_id, "agent_id": "executive", "run_id": payload.run_id},
            payload.flat_metadata(),
        )
    )
    assert await harvester.replay() == {"pending": 1, "confirmed": 1, "still_pending": 0}
    assert await store.count() == 1


async def test_a_hanging_store_times_out_and_stays_pending(store, ledger):
    faulty = FaultyStore(store)
    harvester = Harvester(faulty, ledger, DEFAULTS, timeout_seconds=0.3)
    faulty.mode = "hang"
    summary = await harvester.add([partial("episodic")])
    assert summary.results[0].status == "TIMEOUT"
    assert not summary.ok
    assert [s.key for s in ledger.state().pending()] == [summary.results[0].key]


async def test_update_and_delete_go_through_the_ledger(harvester, store, ledger):
    summary = await harvester.add([partial("semantic")])
    memory_id = summary.results[0].memory_id
    updated = await harvester.update(memory_id, metadata={"importance": "low"})
    assert updated.metadata["importance"] == "low" and updated.metadata["type"] == "semantic"
    assert await harvester.delete(updated)
    assert await store.get(memory_id) is None
    ops = [(line["op"], line["status"]) for line in ledger_lines(ledger)]
    assert ("update", "SUCCEEDED") in ops and ops[-1] == ("delete", "SUCCEEDED")
    assert ledger.state().live() == {}


async def test_a_principle_text_or_metadata_cannot_be_updated(harvester, store):
    from executive.memory.store.base import StoreError

    summary = await harvester.add([partial("principle")], principles=True)
    memory_id = summary.results[0].memory_id
    with pytest.raises(StoreError, match="immutable"):
        await harvester.update(memory_id, text="Push whenever you like.")
    with pytest.raises(StoreError, match="immutable"):
        await harvester.update(memory_id, metadata={"importance": "low"})
    stored = await store.get(memory_id)
    assert stored.text == partial("principle")["text"]
    assert stored.metadata["importance"] == "critical"


async def test_fifty_concurrent_harvests_land_once_each(harvester, store):
    import anyio

    async def one(i: int) -> None:
        result = await harvester.add(
            [partial("semantic", text=f"Fact {i} about mirror {i * 31}.")], near_duplicates=False
        )
        assert result.ok

    async with anyio.create_task_group() as tg:
        for i in range(50):
            tg.start_soon(one, i)
        for i in range(5):  # the same payloads again, racing
            tg.start_soon(one, i)
    assert await store.count(Filter(user_id="agent-test")) == 50


def test_near_duplicates_need_the_same_words_not_only_similarity():
    from executive.memory.write.harvester import same_words

    assert same_words(
        "The mirror resets connections on first contact.",
        "the mirror resets connections on first contact!",
    )
    assert not same_words("Run r1 passed in 3s.", "Run r2 passed in 4s.")
    assert not same_words("Never expose a key.", "Always avoid exposing a key.")
    # The index's tokenizer, not its stop words: "not" and "always" make another rule.
    assert not same_words("The cache is warm.", "The cache is not warm.")
    assert not same_words("Rebase first.", "Always rebase first.")
    assert same_words("The worker's mirror (v1.2) is slow.", "worker mirror v1.2 slow")


class FirstWriterWins:
    """Another executive sharing the store writes each lesson first: the store's own unique
    key then refuses ours and names the memory it holds (as the Postgres store answers)."""

    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name: str):
        return getattr(self._real, name)

    async def add(self, memory: NewMemory) -> WriteReceipt:
        theirs = await self._real.add(memory)
        return WriteReceipt(
            "DUPLICATE", memory_id=theirs.memory_id, detail={"stored_key": memory.metadata["key"]}
        )


async def test_a_write_the_stores_unique_key_refuses_is_a_skip_naming_the_stored_memory(
    store, ledger
):
    harvester = Harvester(FirstWriterWins(store), ledger, DEFAULTS)
    summary = await harvester.add([partial("semantic")])
    (result,) = summary.results
    (stored,) = await store.list(None)
    assert (result.ok, result.status, result.memory_id) == (True, "DUPLICATE", stored.id)
    assert (summary.succeeded, summary.skipped, summary.failed) == (0, 1, 0)
    skip = ledger_lines(ledger)[-1]
    assert (skip["status"], skip["memory_id"], skip["stored_key"]) == (
        "DUPLICATE",
        stored.id,
        result.key,
    )
    assert "error" not in skip and "ms" in skip
    assert ledger.state().pending() == []

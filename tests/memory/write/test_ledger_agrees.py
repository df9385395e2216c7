"""Break 6: after any duplicate, the ledger's fold, drift and a rebuild agree with the store.

The property test drives the real harvester through generated sequences of adds, exact and
near duplicates, updates, deletes and purges, then checks that drift is clean and that a
rebuild from the ledger alone reproduces the store: thirty sequences on the in-memory store
(the property is the harvester's and the ledger's), five on the real embedded store.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from executive.memory.durability.drift import drift
from executive.memory.durability.rebuild import purge, rebuild
from executive.memory.store.base import Filter, MemoryRecord
from executive.memory.write import ledger as L
from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import HarvestLedger
from tests.memory.conftest import open_store
from tests.memory.payloads import DEFAULTS, TRUSTED, partial

FACTS = [
    "The fetch mirror for bundle flaky-fetch resets connections (ECONNRESET) on first contact.",
    "The greeting page build needs index.html written before style.css is generated.",
    "Deploys to the staging host fail when the disk is above ninety percent full.",
]
APPS = ["flaky-fetch", "greeting"]


def near(text: str) -> str:
    """The same words with other punctuation: another content key, a near-duplicate."""
    return text.replace(" (", ", ").replace(") ", ", ").replace(" before ", ", before ")


def fact(i: int, app: int, **meta: Any) -> dict[str, Any]:
    return partial("semantic", text=FACTS[i], app_id=APPS[app], metadata=meta)


def picture(records: list[MemoryRecord]) -> dict[str, tuple[str, dict[str, Any]]]:
    """What a store holds, by key: the text and the envelope (ids and times aside)."""
    return {r.key or r.id: (r.text, dict(r.metadata)) for r in records}


@pytest.fixture
def pair(store, ledger, harvester):
    return store, ledger, harvester


@pytest.mark.anyio
async def test_the_same_text_with_another_confidence_and_run_is_a_skip(harvester, store, ledger):
    first = await harvester.add([fact(0, 0)])
    again = await harvester.add(
        [
            fact(0, 0, confidence=0.9)
            | {
                "run_id": "2026-12-02-other-run",
                "metadata": fact(0, 0)["metadata"] | {"confidence": 0.9},
            }
        ]
    )
    assert again.results[0].status == L.DUPLICATE
    assert again.results[0].memory_id == first.results[0].memory_id
    skip = list(ledger.entries())[-1]
    assert (skip["status"], skip["memory_id"], skip["stored_key"]) == (
        L.DUPLICATE,
        first.results[0].memory_id,
        first.results[0].key,
    )
    assert "payload" not in skip
    report, _, _ = await drift(store, ledger, DEFAULTS.user_id, TRUSTED)
    assert report.clean, report
    (state,) = ledger.state().live().values()
    assert state.payload["metadata"]["confidence"] == 0.85 and state.payload["run_id"].startswith(
        "2026-12-01"
    )


@pytest.mark.anyio
async def test_a_near_duplicate_is_a_skip_and_a_rebuild_stores_one_text(harvester, store, ledger):
    first = await harvester.add([fact(0, 0)])
    again = await harvester.add([partial("semantic", text=near(FACTS[0]), app_id=APPS[0])])
    assert again.results[0].status == L.DUPLICATE
    assert again.results[0].key != first.results[0].key  # another key: a near-duplicate
    assert again.results[0].memory_id == first.results[0].memory_id
    report, _, _ = await drift(store, ledger, DEFAULTS.user_id, TRUSTED)
    assert report.clean, report
    before = picture(await store.list(None))
    result = await rebuild(store, harvester, ledger, TRUSTED)
    assert result["memories"] == 1 and result["refused"] == []
    assert picture(await store.list(None)) == before


# --- the property ---------------------------------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 2), st.integers(0, 1)),
        st.tuples(st.just("dup"), st.integers(0, 2), st.integers(0, 1)),
        st.tuples(st.just("near"), st.integers(0, 2), st.integers(0, 1)),
        st.tuples(st.just("update-text"), st.integers(0, 2), st.integers(0, 1)),
        st.tuples(st.just("update-importance"), st.integers(0, 2), st.integers(0, 1)),
        st.tuples(st.just("delete"), st.integers(0, 2), st.integers(0, 1)),
        st.tuples(st.just("purge"), st.integers(0, 2), st.integers(0, 1)),
    ),
    min_size=1,
    max_size=8,
)


async def _find(store, i: int, app: int) -> MemoryRecord | None:
    for record in await store.list(Filter(user_id=DEFAULTS.user_id, app_ids=(APPS[app],))):
        if record.text.startswith(FACTS[i][:20]) or record.text.startswith("Rewritten " + str(i)):
            return record
    return None


async def _apply(harvester: Harvester, store, op: tuple[str, int, int], step: int) -> None:
    name, i, app = op
    if name == "add":
        await harvester.add([fact(i, app)])
    elif name == "dup":
        payload = fact(i, app, confidence=0.75 + 0.05 * (step % 4))
        await harvester.add([payload | {"run_id": f"2026-12-0{1 + step % 9}-dup-{step}"}])
    elif name == "near":
        await harvester.add([partial("semantic", text=near(FACTS[i]), app_id=APPS[app])])
    elif name == "purge":
        await purge(store, harvester, Filter(user_id=DEFAULTS.user_id, app_ids=(APPS[app],)), "p")
    elif (record := await _find(store, i, app)) is not None:
        if name == "delete":
            assert await harvester.delete(record)
        elif name == "update-text":
            await harvester.update(record.id, text=f"Rewritten {i} at step {step}.")
        else:
            await harvester.update(record.id, metadata={"importance": ["low", "high"][step % 2]})


async def _scenario(sequence: list[tuple[str, int, int]], root: Path, backend: str) -> None:
    store = await open_store(root, backend)
    try:
        ledger = HarvestLedger(root / "ledger")
        harvester = Harvester(store, ledger, DEFAULTS, timeout_seconds=30)
        for step, op in enumerate(sequence):
            await _apply(harvester, store, op, step)
        report, _, _ = await drift(store, ledger, DEFAULTS.user_id, TRUSTED)
        assert report.clean, (sequence, report)
        assert ledger.state().pending() == []
        before = picture(await store.list(None))
        assert set(before) == set(ledger.state().live())
        result = await rebuild(store, harvester, ledger, TRUSTED)
        assert result["refused"] == []
        assert picture(await store.list(None)) == before, sequence
    finally:
        await store.close()


_SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}


@settings(max_examples=30, **_SETTINGS)
@given(ops)
def test_fold_drift_and_rebuild_agree_after_any_sequence(sequence):
    with tempfile.TemporaryDirectory() as tmp:
        anyio.run(_scenario, sequence, Path(tmp), "inmemory")


@pytest.mark.store
@settings(max_examples=5, **_SETTINGS)
@given(ops)
def test_fold_drift_and_rebuild_agree_on_the_embedded_store(sequence):
    with tempfile.TemporaryDirectory() as tmp:
        anyio.run(_scenario, sequence, Path(tmp), "local")

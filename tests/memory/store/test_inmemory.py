"""What the in-memory store does beyond the contract: its journal and its embedder."""

from __future__ import annotations

import json

import numpy as np
import pytest

from executive.memory.runtime import open_store
from executive.memory.store.base import Filter, NewMemory
from executive.memory.store.inmemory import embed
from executive.settings import load_settings
from executive.testing import JOURNAL, InMemoryStore
from tests.conftest import run_cli, set_env
from tests.memory.conftest import meta, scope

pytestmark = pytest.mark.anyio


async def test_a_torn_last_line_is_dropped_and_the_rest_kept(tmp_path):
    store = await InMemoryStore.open(tmp_path)
    first = await store.add(NewMemory("Kept lesson.", scope(), meta(0)))
    await store.close()
    with (tmp_path / JOURNAL).open("a") as journal:
        journal.write('{"op": "add", "record": {"id": "torn')  # a crash mid-append

    again = await InMemoryStore.open(tmp_path)
    try:
        assert [r.id for r in await again.list()] == [first.memory_id]
        # Appends after the torn line would be lost on the next replay: none were confirmed,
        # and the next confirmed write must survive.
        second = await again.add(NewMemory("Written after the crash.", scope(), meta(1)))
    finally:
        await again.close()
    third = await InMemoryStore.open(tmp_path)
    try:
        assert {r.id for r in await third.list()} == {first.memory_id, second.memory_id}
    finally:
        await third.close()


async def test_wipe_starts_the_journal_over(tmp_path):
    store = await InMemoryStore.open(tmp_path)
    for i in range(3):
        await store.add(NewMemory(f"Lesson {i}.", scope(), meta(i)))
    await store.wipe()
    await store.add(NewMemory("After the wipe.", scope(), meta(9)))
    await store.close()
    entries = [json.loads(line) for line in (tmp_path / JOURNAL).read_text().splitlines()]
    assert [e["op"] for e in entries] == ["add"]


def test_the_embedder_is_deterministic_and_matches_shared_words():
    a = embed("Retry the staging fetch with a backoff.")
    assert np.array_equal(a, embed("Retry the staging fetch with a backoff."))
    assert abs(float(np.linalg.norm(a)) - 1.0) < 1e-6
    near = float(np.dot(a, embed("the staging fetch needs a retry")))
    far = float(np.dot(a, embed("Write a poem about roses.")))
    assert near > far
    assert not embed("...").any()  # no words, no direction


async def test_the_setting_selects_it_and_the_cli_reads_what_it_holds(home):
    set_env(home, EXECUTIVE_STORE="inmemory", V3_MEMORY_ENABLED="true")
    settings = load_settings(home)
    store = await open_store(settings)
    try:
        assert store.name == "inmemory"
        receipt = await store.add(
            NewMemory("Pin uv in CI.", scope(user_id=settings.user_id), meta(1, app_id="ci"))
        )
    finally:
        await store.close()

    result = run_cli("--home", str(home), "mem", "get", receipt.memory_id[:8])
    assert result.returncode == 0, result.stderr
    assert "Pin uv in CI." in result.stdout
    again = await InMemoryStore.open(home / ".state" / "store")
    try:
        listed = await again.list(Filter(user_id=settings.user_id))
    finally:
        await again.close()
    assert [r.text for r in listed] == ["Pin uv in CI."]

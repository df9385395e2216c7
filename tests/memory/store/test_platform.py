"""PlatformStore against a local fake of the mem0 Platform, over a real socket, real SDK."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from executive.memory.store.base import Filter, NewMemory, StoreError
from executive.memory.store.platform import PlatformStore, compile_filter
from tests.conftest import REPO, clean_env
from tests.memory.store.platform_fake import FakePlatform

pytestmark = pytest.mark.anyio

KEY = "m0-test-SECRET-key-0123456789abcdef"
USER = "agent-test"
SCOPE = {"user_id": USER, "agent_id": "executive", "run_id": "2026-12-01-platform"}


@pytest.fixture(scope="session")
def mem0_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mem0")


@pytest.fixture
def fake() -> Iterator[FakePlatform]:
    with FakePlatform(api_key=KEY) as running:
        yield running


async def open_store(fake: FakePlatform, mem0_dir: Path, **options: Any) -> PlatformStore:
    settings: dict[str, Any] = {"poll_seconds": 0.05, "poll_timeout_seconds": 1.0}
    settings.update(options)
    return await PlatformStore.open(KEY, host=fake.url, mem0_dir=mem0_dir, **settings)


@pytest.fixture
async def platform(fake: FakePlatform, mem0_dir: Path) -> AsyncIterator[PlatformStore]:
    store = await open_store(fake, mem0_dir)
    yield store
    await store.close()


def meta(type: str = "semantic", confidence: float = 0.9, app_id: str = "app-a", **extra: Any):
    return {
        "type": type,
        "confidence": confidence,
        "env": "prod",
        "app_id": app_id,
        "key": uuid.uuid4().hex,
        **extra,
    }


def seed(fake: FakePlatform, text: str, *, user_id: str | None = USER, **options: Any) -> str:
    app_id = options.pop("app_id", "app-a")
    return fake.insert(
        text,
        meta(app_id=app_id, **options),
        user_id=user_id,
        agent_id="executive",
        app_id=app_id,
        run_id=SCOPE["run_id"],
    )


def metadata_conditions(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "metadata":
                yield from value.items()
            elif key in ("AND", "OR", "NOT"):
                yield from metadata_conditions(value)
    elif isinstance(node, list):
        for child in node:
            yield from metadata_conditions(child)


def last_filters(fake: FakePlatform, path: str) -> dict[str, Any]:
    return fake.requests(path)[-1].body["filters"]


# --- writes: async events -----------------------------------------------------------------
async def test_add_polls_pending_running_succeeded(fake: FakePlatform, platform: PlatformStore):
    receipt = await platform.add(NewMemory("Pin uv in CI.", SCOPE, meta(app_id="app-b")))

    assert receipt.confirmed and receipt.status == "SUCCEEDED"
    assert receipt.memory_id in fake.memories
    polls = fake.requests("/v1/event/")
    assert [p.answer["status"] for p in polls] == ["PENDING", "RUNNING", "SUCCEEDED"]
    assert {p.path for p in polls} == {f"/v1/event/{receipt.event_id}/"}
    (add,) = fake.requests("/v3/memories/add/")
    body = add.body
    assert body["messages"] == [{"role": "user", "content": "Pin uv in CI."}]
    assert body["infer"] is False
    # The four ids top-level; app_id came from the metadata (the harvester keeps it there).
    assert {k: body[k] for k in ("user_id", "agent_id", "app_id", "run_id")} == {
        **SCOPE,
        "app_id": "app-b",
    }
    assert body["metadata"]["app_id"] == "app-b" and "filters" not in body
    stored = fake.memories[receipt.memory_id]
    assert stored["user_id"] == USER and stored["agent_id"] == "executive"
    # Every request, the event polls included, carried the Token header.
    assert {s.authorization for s in fake.seen} == {f"Token {KEY}"}


async def test_created_at_is_sent_as_timestamp(fake: FakePlatform, platform: PlatformStore):
    receipt = await platform.add(
        NewMemory("Old lesson.", SCOPE, meta(), created_at="2026-01-02T03:04:05Z")
    )
    assert receipt.confirmed
    expected = int(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp())
    assert fake.requests("/v3/memories/add/")[0].body["timestamp"] == expected
    record = await platform.get(receipt.memory_id)
    assert record is not None and record.created_at.startswith("2026-01-02T03:04:05")


async def test_failed_event_is_reported_failed(fake: FakePlatform, platform: PlatformStore):
    fake.script("fail")
    receipt = await platform.add(NewMemory("Doomed.", SCOPE, meta()))
    assert receipt.status == "FAILED" and not receipt.confirmed
    assert "simulated failure" in (receipt.error or "")
    assert receipt.event_id and not fake.memories


async def test_never_finishing_event_times_out(fake: FakePlatform, mem0_dir: Path):
    store = await open_store(fake, mem0_dir, poll_timeout_seconds=0.5)
    try:
        fake.script("hang")
        started = time.monotonic()
        receipt = await store.add(NewMemory("Stuck.", SCOPE, meta()))
        elapsed = time.monotonic() - started
    finally:
        await store.close()
    assert receipt.status == "TIMEOUT" and not receipt.confirmed
    assert receipt.memory_id is None and receipt.event_id in fake.events
    assert "RUNNING" in (receipt.error or "")
    assert elapsed >= 0.5  # it waited out the timeout (how much longer depends on the machine)
    assert len(fake.requests("/v1/event/")) >= 5


async def test_polls_answered_500_are_ignored(fake: FakePlatform, platform: PlatformStore):
    fake.script("succeed", errors=3)
    receipt = await platform.add(NewMemory("Flaky server.", SCOPE, meta()))
    assert receipt.confirmed
    assert [p.status for p in fake.requests("/v1/event/")] == [500, 500, 500, 200, 200, 200]


async def test_succeeded_without_memory_is_not_confirmed(
    fake: FakePlatform, platform: PlatformStore
):
    first = await platform.add(NewMemory("Same text.", SCOPE, meta()))
    again = await platform.add(NewMemory("Same text.", SCOPE, meta()))
    assert first.confirmed
    assert again.status == "SUCCEEDED" and again.memory_id is None and not again.confirmed
    assert "created no memory" in (again.error or "")
    assert len(fake.memories) == 1


@pytest.mark.parametrize("mode", ["queued-list", "sync"])
async def test_other_add_answer_shapes(fake: FakePlatform, platform: PlatformStore, mode: str):
    fake.add_mode = mode
    receipt = await platform.add(NewMemory("Shape check.", SCOPE, meta()))
    assert receipt.confirmed and receipt.memory_id in fake.memories
    assert bool(fake.requests("/v1/event/")) == (mode == "queued-list")
    # An exact repeat: SUCCEEDED with nothing created is not a confirmation, in either shape.
    again = await platform.add(NewMemory("Shape check.", SCOPE, meta()))
    assert again.status == "SUCCEEDED" and not again.confirmed
    assert len(fake.memories) == 1


# --- auth, the loop, imports --------------------------------------------------------------
async def test_wrong_key_fails_cleanly(fake: FakePlatform, mem0_dir: Path):
    wrong = "m0-WRONG-key-9876543210fedcba"
    with pytest.raises(StoreError) as caught:
        await PlatformStore.open(wrong, host=fake.url, mem0_dir=mem0_dir)
    assert wrong not in str(caught.value) and KEY not in str(caught.value)
    assert "Invalid API key" in str(caught.value)
    assert fake.requests("/v1/ping/")[-1].authorization == f"Token {wrong}"


async def test_revoked_key_fails_cleanly(fake: FakePlatform, platform: PlatformStore):
    fake.api_key = "m0-rotated-key-000000000000"
    with pytest.raises(StoreError) as caught:
        await platform.search("anything", Filter(user_id=USER), 5)
    assert "401" in str(caught.value) and KEY not in str(caught.value)
    with pytest.raises(StoreError) as caught:
        await platform.list(Filter(user_id=USER))
    assert KEY not in str(caught.value)


async def test_closed_store_refuses(fake: FakePlatform, mem0_dir: Path):
    store = await open_store(fake, mem0_dir)
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.get(str(uuid.uuid4()))


async def test_ping_does_not_block_the_event_loop(fake: FakePlatform, mem0_dir: Path):
    gate = fake.hold_pings()
    opened: list[PlatformStore] = []

    async def opener() -> None:
        opened.append(await open_store(fake, mem0_dir))

    async with anyio.create_task_group() as group:
        group.start_soon(opener)
        # This task hears of the held ping, and lets it go, only if the event loop still runs
        # while the constructor waits on it; a blocked loop would hold it for the fake's 30 s.
        await anyio.to_thread.run_sync(fake.ping_arrived.wait)
        gate.set()
    assert fake.ping_released is True
    await opened[0].close()


def test_import_is_lazy_and_telemetry_is_off(fake: FakePlatform, tmp_path: Path):
    script = textwrap.dedent(
        f"""
        import os, sys, anyio
        import executive.memory.store.platform as platform
        assert "mem0" not in sys.modules, "mem0 imported with the module"

        async def main():
            store = await platform.PlatformStore.open({KEY!r}, host={fake.url!r})
            await store.close()

        anyio.run(main)
        telemetry = sys.modules["mem0.memory.telemetry"]
        assert telemetry.MEM0_TELEMETRY is False
        assert telemetry.client_telemetry.posthog is None
        print("ok")
        """
    )
    env = clean_env({"MEM0_TELEMETRY": "True", "MEM0_DIR": str(tmp_path), "HOME": str(tmp_path)})
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "ok"


# --- reads: filters -----------------------------------------------------------------------
async def test_search_post_filters_confidence_and_type(fake: FakePlatform, platform: PlatformStore):
    good = seed(fake, "deploy the service with the uv lockfile", confidence=0.95)
    weak = seed(fake, "deploy uv lockfile every time", confidence=0.4)  # best overlap
    seed(fake, "deploy uv lockfile as a procedure", type="procedural", confidence=0.99)
    seed(fake, "deploy uv lockfile elsewhere", user_id="someone-else")

    where = Filter(user_id=USER, types=("semantic",), min_confidence=0.7, env="prod")
    found = await platform.search("deploy uv lockfile", where, 2)

    assert [r.id for r in found] == [good]
    (sent,) = fake.requests("/v3/memories/search/")
    assert weak in [row["id"] for row in sent.answer["results"]]  # the server returned it
    assert sent.body["top_k"] == 30 and sent.body["threshold"] == 0.0
    assert not any(k in sent.body for k in ("user_id", "agent_id", "app_id", "run_id"))
    conditions = list(metadata_conditions(sent.body["filters"]))
    assert ("type", "semantic") in conditions and ("env", "prod") in conditions
    assert all(not isinstance(v, dict) for _, v in conditions)  # never gte/in on metadata
    assert "confidence" not in {k for k, _ in conditions}

    both = await platform.search(
        "deploy uv lockfile", Filter(user_id=USER, types=("semantic", "procedural")), 10
    )
    assert {r.type for r in both} == {"semantic", "procedural"}
    assert fake.requests("/v3/memories/search/")[-1].body["top_k"] == 10  # no over-fetch
    assert {"OR": [{"metadata": {"type": "semantic"}}, {"metadata": {"type": "procedural"}}]} in (
        last_filters(fake, "/v3/memories/search/")["AND"]
    )


async def test_app_scoping_across_several_apps(fake: FakePlatform, platform: PlatformStore):
    ids = {app: seed(fake, f"lesson about caching in {app}", app_id=app) for app in ("a", "b", "c")}
    bare = fake.insert(
        "lesson about caching with app only top-level",
        {"type": "semantic"},
        user_id=USER,
        agent_id="executive",
        app_id="b",
        run_id=SCOPE["run_id"],
    )

    where = Filter(user_id=USER, app_ids=("a", "b"))
    found = await platform.search("lesson about caching", where, 10)
    assert {r.id for r in found} == {ids["a"], ids["b"], bare}
    assert {"app_id": {"in": ["a", "b"]}} in last_filters(fake, "/v3/memories/search/")["AND"]
    listed = await platform.list(where)
    assert {r.id for r in listed} == {ids["a"], ids["b"], bare}
    assert {r.app_id for r in listed} == {"a", "b"}  # set from the top-level field

    one = await platform.list(Filter(user_id=USER, app_ids=("c",)))
    assert [r.id for r in one] == [ids["c"]]
    assert {"app_id": "c"} in last_filters(fake, "/v3/memories/")["AND"]


@pytest.mark.parametrize("scoping", ["implicit-null", "mentioned-only"])
async def test_entity_scoping_under_both_doc_readings(mem0_dir: Path, scoping: str):
    with FakePlatform(api_key=KEY, scoping=scoping) as fake:
        store = await open_store(fake, mem0_dir)
        try:
            mine = await store.add(NewMemory("A fact of mine.", SCOPE, meta()))
            await store.add(NewMemory("Not mine.", {**SCOPE, "user_id": "other"}, meta()))
            for where in (
                Filter(user_id=USER),
                Filter(user_id=USER, agent_id="executive"),
                Filter(user_id=USER, run_id=SCOPE["run_id"], app_ids=("app-a",)),
            ):
                assert [r.id for r in await store.list(where)] == [mine.memory_id], where
                assert [r.id for r in await store.search("fact of mine", where, 5)] == [
                    mine.memory_id
                ]
            assert compile_filter(Filter(user_id=USER))["AND"][:4] == [
                {"user_id": USER},
                {"agent_id": "*"},
                {"app_id": "*"},
                {"run_id": "*"},
            ]
        finally:
            await store.close()
        # Why the wildcards: the bare form finds nothing under implicit null scoping.
        async with httpx.AsyncClient() as raw:
            answer = await raw.post(
                f"{fake.url}/v3/memories/",
                json={"filters": {"AND": [{"user_id": USER}]}},
                headers={"Authorization": f"Token {KEY}"},
            )
        naive = answer.json()
        assert len(naive["results"]) == (0 if scoping == "implicit-null" else 1)


async def test_complete_listing_across_pages(fake: FakePlatform, platform: PlatformStore):
    mine = {seed(fake, f"memory {i}", app_id=f"app-{i % 7}") for i in range(450)}
    for i in range(5):
        seed(fake, f"foreign {i}", user_id="someone-else")

    listed = await platform.list(Filter(user_id=USER))
    assert {r.id for r in listed} == mine and len(listed) == 450
    pages = [(s.query["page"], s.query["page_size"]) for s in fake.requests("/v3/memories/")]
    assert pages == [(["1"], ["200"]), (["2"], ["200"]), (["3"], ["200"])]
    assert await platform.count(Filter(user_id=USER)) == 450
    assert await platform.count(Filter(user_id=USER, app_ids=("app-0",))) == 65
    assert await platform.count() == 455


async def test_get_history_update_delete(fake: FakePlatform, platform: PlatformStore):
    receipt = await platform.add(NewMemory("Use ruff.", SCOPE, meta(importance="low")))
    memory_id = receipt.memory_id
    assert memory_id is not None

    record = await platform.get(memory_id)
    assert record is not None and record.text == "Use ruff."
    assert (record.user_id, record.agent_id, record.app_id, record.run_id) == (
        USER,
        "executive",
        "app-a",
        SCOPE["run_id"],
    )
    assert record.type == "semantic" and record.confidence == 0.9

    await platform.update(memory_id, metadata={"importance": "high"})
    put = fake.requests(f"/v1/memories/{memory_id}/", "PUT")[-1].body
    assert "text" not in put and put["metadata"]["type"] == "semantic"
    merged = await platform.get(memory_id)
    assert merged is not None and merged.metadata["importance"] == "high"
    assert {k: merged.metadata[k] for k in ("type", "env", "app_id", "key")} == {
        k: record.metadata[k] for k in ("type", "env", "app_id", "key")
    }

    await platform.update(memory_id, text="Use ruff, line length 100.")
    changed = await platform.get(memory_id)
    assert changed is not None and changed.text == "Use ruff, line length 100."
    assert changed.metadata["importance"] == "high"
    assert [h["event"] for h in await platform.history(memory_id)] == ["ADD", "UPDATE", "UPDATE"]

    await platform.delete(memory_id)
    assert await platform.get(memory_id) is None
    await platform.delete(memory_id)  # already gone: still deleted
    assert await platform.get("not-a-uuid") is None
    with pytest.raises(StoreError, match="no memory"):
        await platform.update(memory_id, metadata={"x": "y"})


async def test_wipe_deletes_everything(fake: FakePlatform, platform: PlatformStore):
    for i in range(12):
        seed(fake, f"memory {i}", user_id=f"user-{i % 3}")
    fake.insert("agent-only memory", {}, agent_id="executive")
    await platform.wipe()
    assert fake.memories == {}
    assert await platform.count() == 0


# --- the fake holds the documented contract -----------------------------------------------
@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        (
            "/v3/memories/search/",
            {
                "query": "q",
                "filters": {"AND": [{"user_id": "u"}, {"metadata": {"confidence": {"gte": 0.7}}}]},
            },
            400,
        ),
        (
            "/v3/memories/search/",
            {
                "query": "q",
                "filters": {"AND": [{"user_id": "u"}, {"metadata": {"type": {"in": ["a"]}}}]},
            },
            400,
        ),
        (
            "/v3/memories/search/",
            {"query": "q", "filters": {"AND": [{"user_id": "u"}, {"bogus": 1}]}},
            400,
        ),
        (
            "/v3/memories/search/",
            {"query": "q", "filters": {"AND": [{"user_id": {">=": "u"}}]}},
            400,
        ),
        (
            "/v3/memories/search/",
            {"query": "q", "filters": {"AND": [{"metadata": {"type": "a"}}]}},
            400,
        ),
        (
            "/v3/memories/search/",
            {"query": "q", "user_id": "u", "filters": {"AND": [{"user_id": "u"}]}},
            400,
        ),
        ("/v3/memories/search/", {"query": "q", "filters": {"user_id": "u"}}, 400),
        (
            "/v3/memories/search/",
            {"query": "q", "filters": {"AND": [{"user_id": "u"}, {"metadata": {"type": "a"}}]}},
            200,
        ),
        ("/v3/memories/?page_size=201", {"filters": {"AND": [{"user_id": "u"}]}}, 400),
        ("/v3/memories/add/", {"messages": [{"role": "user", "content": "x"}]}, 400),
    ],
)
def test_fake_enforces_the_documented_contract(
    fake: FakePlatform, path: str, body: dict, status: int
):
    answer = httpx.post(f"{fake.url}{path}", json=body, headers={"Authorization": f"Token {KEY}"})
    assert answer.status_code == status, answer.text


@pytest.mark.parametrize("header", [None, f"Bearer {KEY}", "Token nope"])
def test_fake_requires_the_token_header(fake: FakePlatform, header: str | None):
    headers = {"Authorization": header} if header else {}
    assert httpx.get(f"{fake.url}/v1/ping/", headers=headers).status_code == 401

"""Break 5: payloads that were stored are refused by field, and nothing reaches the store."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from executive.memory.write import ledger as L
from executive.memory.write.classify import Rejected, classify
from executive.memory.write.limits import MAX_TEXT_CHARS
from tests.memory.payloads import partial, stamped

pytestmark = pytest.mark.anyio

MEGABYTE = "x" * 1_048_576

# (case, payload, the field refused, words in its reason)
REFUSED: list[tuple[str, dict[str, Any], str, str]] = [
    ("other-installation", partial("semantic", user_id="someone-else"), "user_id", "another"),
    ("app-id-newline", partial("semantic", app_id="foo\n"), "app_id", "kebab"),
    ("tag-newline", partial("semantic", metadata={"tags": ["ok\n"]}), "metadata.tags", "token"),
    (
        "run-id-path",
        partial("semantic", run_id="2026-01-01\n../x"),
        "run_id",
        "YYYY-MM-DD",
    ),
    (
        "expires-at-junk",
        partial("semantic", metadata={"expires_at": "2026-99-99T99:99:99junk"}),
        "metadata.expires_at",
        "real ISO datetime",
    ),
    (
        "expires-at-impossible",
        partial("semantic", metadata={"expires_at": "2026-02-30T10:00:00Z"}),
        "metadata.expires_at",
        "real ISO datetime",
    ),
    ("text-megabyte", partial("semantic", text=MEGABYTE), "text", f"at most {MAX_TEXT_CHARS}"),
    (
        "source-megabyte",
        partial("semantic", metadata={"source": MEGABYTE}),
        "metadata.source",
        "at most 300",
    ),
    ("text-lone-surrogate", partial("semantic", text="fact \ud800 here"), "text", "UTF-8"),
    (
        "source-lone-surrogate",
        partial("semantic", metadata={"source": "a/\udfff.md"}),
        "metadata.source",
        "UTF-8",
    ),
    (
        "source-newline",
        partial("semantic", metadata={"source": "notes.md\n## Rules"}),
        "metadata.source",
        "control characters",
    ),
    (
        "cohort-newline",
        partial("semantic", metadata={"cohort": "c1\n"}),
        "metadata.cohort",
        "token",
    ),
    (
        "schema-version-newline",
        partial("semantic", metadata={"schema_version": "1.1.0\n"}),
        "metadata.schema_version",
        "MAJOR.MINOR.PATCH",
    ),
]


@pytest.mark.parametrize(
    ("payload", "field", "words"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
async def test_each_is_refused_by_field_and_nothing_is_written(
    harvester, store, ledger, payload, field, words
):
    with pytest.raises(Rejected) as caught:
        await harvester.add([payload], actor="cli")
    matching = [r for r in caught.value.rejections if r.field == f"[0].{field}"]
    assert matching, caught.value.rejections
    assert any(words in r.reason for r in matching), matching
    assert await store.count() == 0
    lines = list(ledger.entries())
    assert [line["status"] for line in lines] == [L.REJECTED]
    # The rejection is recorded as printable JSON, however hostile the payload.
    json.dumps(lines[0], ensure_ascii=False).encode("utf-8")
    assert len(json.dumps(lines[0])) < 2_000


def test_a_reason_never_carries_a_whole_hostile_value():
    payload = stamped("semantic", metadata={"env": "x" * 100_000, "tags": [["deep"] * 3]})
    reasons = classify(payload)
    assert {r.field for r in reasons} >= {"metadata.env", "metadata.tags"}
    assert all(len(str(r)) < 200 for r in reasons)


def test_a_deeply_nested_value_is_refused_without_recursing():
    deep: Any = "x"
    for _ in range(50_000):
        deep = [deep]
    payload = stamped("semantic", metadata={"category": deep})
    assert [r.field for r in classify(payload)] == ["metadata.category"]


async def test_a_4000_character_memory_is_written(harvester, store):
    text = ("The mirror resets connections on first contact; retry with backoff. " * 60)[
        :MAX_TEXT_CHARS
    ]
    started = time.monotonic()
    summary = await harvester.add([partial("semantic", text=text)])
    elapsed = time.monotonic() - started
    assert summary.succeeded == 1
    (stored,) = await store.list(None)
    assert stored.text == text
    print(f"a {len(text)}-character memory took {elapsed:.2f}s to write")  # for the record


async def test_an_update_meets_the_same_limits_and_writes_nothing_when_refused(
    harvester, store, ledger
):
    summary = await harvester.add([partial("semantic")])
    memory_id = summary.results[0].memory_id
    lines = len(list(ledger.entries()))
    for changes, field in [
        ({"text": MEGABYTE}, "text"),
        ({"text": "fact \ud800"}, "text"),
        ({"metadata": {"importance": "urgent\n"}}, "metadata.importance"),
        ({"metadata": {"tags": ["ok\n"]}}, "metadata.tags"),
    ]:
        with pytest.raises(Rejected) as caught:
            await harvester.update(memory_id, **changes)
        assert [r.field for r in caught.value.rejections] == [field]
    stored = await store.get(memory_id)
    assert stored.text == partial("semantic")["text"]
    assert len(list(ledger.entries())) == lines
    updated = await harvester.update(memory_id, metadata={"importance": "low"})
    assert updated.metadata["importance"] == "low"

"""The store's word index, kept write by write, answers as one built afresh over what the
filters admit: the same memories, the same statistics, the same search results."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from executive.memory.read.lexical import term_counts
from executive.memory.read.ranking import admissible
from executive.memory.read.words import terms
from executive.memory.store import wordindex
from executive.memory.store.base import Filter, MemoryRecord
from executive.memory.store.wordindex import WordIndex
from tests.memory.bm25 import plain_bm25, single

WORDS = ["deploy", "mirror", "econnreset", "flaky-fetch", "lesson", "cache", "lint", "notes"]
NOW = datetime(2026, 12, 2, tzinfo=UTC)
QUERIES = [["deploy"], ["mirror", "lesson"], WORDS, ["cache", "absent"], ["notes", "notes"]]


def record(i: int, version: int, fields: dict) -> MemoryRecord:
    words = fields["words"]
    return MemoryRecord(
        id=f"m{i:03d}",
        text=" ".join(words) or "nothing",
        user_id=fields["user"],
        agent_id="executive",
        app_id=fields["app"],
        metadata={
            "type": fields["type"],
            "confidence": fields["confidence"],
            "env": fields["env"],
            **({"expires_at": fields["expires"]} if fields["expires"] else {}),
            "version": version,
        },
        # Many memories share a creation time: the tie order must hold across parts too.
        created_at=f"2026-11-{1 + i % 3:02d}T00:00:00+00:00",
    )


fields = st.fixed_dictionaries(
    {
        "words": st.lists(st.sampled_from(WORDS), max_size=6),
        "user": st.sampled_from(["u1", "u2", None]),
        "app": st.sampled_from(["app-a", "app-b", "_global", None]),
        "type": st.sampled_from(["semantic", "principle", "episodic", 7]),
        "confidence": st.sampled_from([0.9, 0.7, 0.65, 1, True, "0.9", None]),
        "env": st.sampled_from(["prod", "test", None]),
        "expires": st.sampled_from([None, "2026-12-01T00:00:00Z", "2027-01-01", "soon"]),
    }
)
# A write: put memory i (new, or a new version of it), or delete it.
ops = st.lists(
    st.tuples(st.sampled_from(["put", "delete"]), st.integers(0, 39), fields), max_size=120
)
WHERES = [
    Filter(user_id="u1", agent_id="executive", app_ids=("app-a",), env="prod", min_confidence=0.7),
    Filter(user_id="u1", agent_id="executive", app_ids=("_global",), env="prod"),
    Filter(user_id="u1", app_ids=("app-a", "app-b"), types=("semantic", "principle")),
    Filter(user_id="u2", env="test", min_confidence=0.9),  # every app
    Filter(user_id="nobody", app_ids=("app-a",)),
]


def _fresh(live: dict[str, MemoryRecord], wheres: list[Filter], floor: float) -> list:
    """What the filters admit, as a listing gives it (oldest first)."""
    kept: dict[str, MemoryRecord] = {}
    for where in wheres:
        for r in sorted(live.values(), key=lambda r: (r.created_at or "", r.id)):
            if where.matches(r) and admissible(r, floor, NOW):
                kept.setdefault(r.id, r)
    return list(kept.values())


def _same(index, kept: list[MemoryRecord]) -> None:
    fresh = single(kept)
    assert index is not None
    assert index.n == fresh.n == len(kept)
    assert sorted(r.id for r in index.records()) == sorted(r.id for r in kept)
    for word in [*WORDS, "absent"]:
        term = terms(word)[0] if terms(word) else word
        assert index.df.get(term, 0) == sum(1 for r in kept if term in term_counts(r.text).terms)
        assert index.idf(term) == fresh.idf(term)
    for query in QUERIES:
        found = [t for w in query for t in terms(w)] or query
        assert index.search(found, 25) == plain_bm25(kept, found, 25), query
        boost = {found[0]: 0.5}
        assert index.search(found, 25, boost) == plain_bm25(kept, found, 25, boost)


@settings(max_examples=120, deadline=None)
@given(ops=ops, floor=st.sampled_from([0.0, 0.7, 0.95]))
def test_an_index_kept_write_by_write_answers_as_one_built_afresh(ops, floor):
    index, live = WordIndex(), {}
    for step, (op, i, values) in enumerate(ops):
        memory_id = f"m{i:03d}"
        if op == "put":
            live[memory_id] = record(i, step, values)
            index.put([live[memory_id]])
        else:
            live.pop(memory_id, None)
            index.remove(memory_id)
    assert len(index) == len(live)
    for where in WHERES:
        _same(index.view([where], floor, NOW), _fresh(live, [where], floor))
    # Scopes that share memories (app-a in both): each memory counts once.
    both = [WHERES[0], WHERES[2]]
    _same(index.view(both, floor, NOW), _fresh(live, both, floor))


def test_small_and_laid_out_blocks_and_dead_memories_all_answer_alike(monkeypatch):
    """Many writes to one app: the small block fills, is laid out, and dead memories go."""
    monkeypatch.setattr(wordindex, "FRESH_MIN", 4)
    base = {"user": "u1", "app": "app-a", "type": "semantic", "confidence": 0.9}
    base |= {"env": "prod", "expires": None}
    index, live = WordIndex(), {}
    for step in range(200):
        i = (step * 7) % 50
        if step % 5 == 4:
            live.pop(f"m{i:03d}", None)
            index.remove(f"m{i:03d}")
            continue
        values = base | {"words": [WORDS[(step + k) % len(WORDS)] for k in range(step % 4)]}
        live[f"m{i:03d}"] = record(i, step, values)
        index.put([live[f"m{i:03d}"]])
        if step % 17 == 0:
            _same(index.view([WHERES[0]], 0.7, NOW), _fresh(live, [WHERES[0]], 0.7))
    _same(index.view([WHERES[0]], 0.7, NOW), _fresh(live, [WHERES[0]], 0.7))


def test_a_request_sees_the_index_as_it_was_when_it_began():
    values = {"words": ["mirror"], "user": "u1", "app": "app-a", "type": "semantic"}
    values |= {"confidence": 0.9, "env": "prod", "expires": None}
    index = WordIndex([record(i, 0, values) for i in range(5)])
    before = index.view([WHERES[0]], 0.7, NOW)
    index.put([record(9, 1, values), record(0, 1, values | {"words": ["cache"]})])
    index.remove("m001")
    assert before is not None and before.n == 5
    assert sorted(before.search(["mirror"], 10)) == ["m000", "m001", "m002", "m003", "m004"]
    after = index.view([WHERES[0]], 0.7, NOW)
    assert after is not None and sorted(after.search(["mirror"], 10)) == [
        "m002",
        "m003",
        "m004",
        "m009",
    ]


def test_expiry_is_read_against_the_readers_clock():
    values = {"words": ["mirror"], "user": "u1", "app": "app-a", "type": "semantic"}
    values |= {"confidence": 0.9, "env": "prod", "expires": "2026-12-01T12:00:00+00:00"}
    index = WordIndex([record(1, 0, values)])
    assert index.view([WHERES[0]], 0.7, datetime(2026, 12, 1, tzinfo=UTC)).n == 1
    assert index.view([WHERES[0]], 0.7, datetime(2026, 12, 1, 12, tzinfo=UTC)).n == 0


def test_a_filter_it_does_not_keep_gets_no_index():
    index = WordIndex()
    assert index.view([Filter(user_id="u1", run_id="2026-12-01-x")], 0.7, NOW) is None
    assert index.view([Filter(key="k"), WHERES[0]], 0.7, NOW) is None
    assert index.view([WHERES[0]], 0.7, NOW).n == 0


def test_a_memory_moved_to_another_app_leaves_the_first():
    values = {"words": ["mirror"], "user": "u1", "app": "app-a", "type": "semantic"}
    values |= {"confidence": 0.9, "env": "prod", "expires": None}
    index = WordIndex([record(1, 0, values)])
    index.put([record(1, 1, values | {"app": "app-b"})])
    assert index.view([WHERES[0]], 0.7, NOW).n == 0
    assert index.view([WHERES[2]], 0.7, NOW).n == 1 and index.app_of("m001") == "app-b"

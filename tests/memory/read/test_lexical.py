from __future__ import annotations

from collections import Counter

from executive.memory.read.lexical import LexicalIndex, SampleStats, best_first
from executive.memory.read.refine import focus_sentence, refinement, ubiquitous
from executive.memory.read.scope_index import ScopedIndex
from executive.memory.read.words import stem, terms
from executive.memory.store.base import MemoryRecord


def search(index: LexicalIndex, query: list[str], top_k: int) -> list[str]:
    """BM25 over one index, as a request searches it."""
    return ScopedIndex([(index, None)]).search(query, top_k)


def record(i: int, text: str) -> MemoryRecord:
    return MemoryRecord(id=f"m{i}", text=text, metadata={"type": "semantic", "confidence": 0.9})


def test_terms_drop_stop_words_stem_and_keep_identifiers():
    assert terms("Caroline was researching the ECONNRESET in flaky-fetch's run_2") == [
        "caroline",
        "research",
        "econnreset",
        "flaky-fetch",
        "run_2",
    ]
    assert stem("paintings") == "paint" and stem("running") == "run"


def test_bm25_finds_the_rare_exact_word():
    index = LexicalIndex(
        [
            record(1, "the deploy failed"),
            record(2, "ECONNRESET from the mirror"),
            record(3, "deploy ok"),
        ]
    )
    assert search(index, terms("why ECONNRESET?"), 3) == ["m2"]
    assert index.share("deploy") == 2 / 3 and index.idf("econnreset") > index.idf("deploy")


def _bm25_one_by_one(index: LexicalIndex, query: list[str], top_k: int) -> list[str]:
    """BM25 written plainly, a memory at a time: what the index's arrays must equal."""
    scores: dict[str, float] = {}
    for memory_id, record in index.records.items():
        held = Counter(terms(record.text))
        for term in dict.fromkeys(query):
            if held[term]:
                idf = index.idf(term)
                norm = index.k1 * (
                    1 - index.b + index.b * held.total() / (index.total_length / index.n)
                )
                share = idf * held[term] * (index.k1 + 1) / (held[term] + norm)
                scores[memory_id] = scores.get(memory_id, 0.0) + share
    return best_first(scores)[:top_k]


def test_bm25_scores_every_memory_as_the_plain_formula_does():
    """To the last bit: the ranking, ties by id included, is the loop's."""
    words = ["deploy", "mirror", "flaky-fetch", "release", "notes", "lint", "cli", "schema"]
    texts = [" ".join(words[(i * k) % len(words)] for k in range(1 + i % 5)) for i in range(300)]
    index = LexicalIndex(record(i, text) for i, text in enumerate(texts))
    for query in (["deploy"], ["mirror", "lint", "nothing"], words, ["schema", "deploy"] * 2):
        assert search(index, query, 40) == _bm25_one_by_one(index, query, 40), query
    assert search(index, ["absent"], 5) == [] and search(LexicalIndex([]), ["deploy"], 5) == []


def test_the_focus_sentence_drops_words_that_are_everywhere():
    records = [record(i, f"greeting-page note {i}: step {i} details") for i in range(10)] + [
        record(99, "the mirror")
    ]
    index = LexicalIndex(records)
    assert ubiquitous(index, "greeting-page", 0.2, 5)
    assert (
        focus_sentence("Why did greeting-page fail on the mirror?", index, 0.2, 5)
        == "Why did fail on the mirror?"
    )


def test_a_refinement_lends_the_seeds_most_specific_new_words():
    seen = {
        "m1": record(1, "Run 2026-11-02-x1 failed with ECONNRESET on mirror-eu"),
        "m2": record(2, "nothing"),
    }
    stats = SampleStats()
    stats.add(seen.values())

    class Cfg:
        ubiquitous_share, ubiquitous_min, seed_terms = 0.2, 5, 2

    seed, picked = refinement(["m1", "m2"], seen, stats, set(), {"fail"}, Cfg())
    assert seed == "m1" and len(picked) == 2
    assert all(term != "fail" for _, term in picked)


def test_an_index_rebuilt_after_a_write_tokenises_only_the_new_texts():
    from executive.memory.read import lexical
    from executive.memory.store.base import MemoryRecord

    old = [MemoryRecord(id=f"m{i}", text=f"The mirror {i} resets connections.") for i in range(3)]
    first = lexical.LexicalIndex(old)
    calls: list[str] = []
    original = lexical.terms

    def counting(text: str) -> list[str]:
        calls.append(text)
        return original(text)

    lexical.terms = counting
    try:
        new = MemoryRecord(id="m9", text="A brand new lesson about ECONNRESET.")
        second = lexical.LexicalIndex([*old, new])
    finally:
        lexical.terms = original
    assert calls == [new.text]
    assert search(second, ["mirror"], 10) == search(first, ["mirror"], 10)
    assert search(second, ["econnreset"], 10) == ["m9"]

"""What one read holds: the questions planned before any answer, and the fused evidence."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from executive.memory.read.lexical import SampleStats
from executive.memory.read.reading import (
    MAX_QUESTIONS,
    Questions,
    ReaderConfig,
    ReadRequest,
    ReadState,
    Scope,
)
from executive.memory.store.base import MemoryRecord

CFG = ReaderConfig()
NOW = datetime(2026, 12, 4, tzinfo=UTC)
PROJECT = (Scope("project", app_ids=("acme",)),)


def record(i: int, score: float | None = None, text: str = "") -> MemoryRecord:
    return MemoryRecord(id=f"m{i}", text=text or f"memory {i}", score=score)


def state(*questions: str, topic: str = "the topic", stats: SampleStats | None = None):
    request = ReadRequest(topic=topic, questions=questions, scopes=PROJECT)
    sample = stats if stats is not None else SampleStats()
    planned = Questions.plan(request, sample, CFG)
    return ReadState(request, NOW, None, sample, planned)


def test_the_plan_drops_blank_and_repeated_questions_and_keeps_at_most_eight():
    asked = ("  ", "Why did the deploy fail?", "Why did the deploy fail?")
    asked += tuple(f"Angle {i}?" for i in range(10))
    planned = state(*asked).questions
    assert planned.first == "Why did the deploy fail?"
    assert planned.planned == ["Why did the deploy fail?", *(f"Angle {i}?" for i in range(7))]
    assert len(planned.planned) == MAX_QUESTIONS
    assert [q for q, _, _ in planned.queue(CFG)] == planned.planned
    assert [w for _, w, _ in planned.queue(CFG)] == [CFG.w_question] + [CFG.w_angle] * 7


def test_without_questions_the_topic_is_asked():
    planned = state(topic="deploy the landing page").questions
    assert planned.first == "deploy the landing page" and planned.planned == []
    assert planned.unanswered() == ["deploy the landing page"]


def test_the_focus_drops_the_words_found_everywhere_and_is_embedded_second():
    everywhere = SampleStats()
    everywhere.add([record(i, text=f"acme note {i} about item{i}") for i in range(10)])
    planned = state("Why does acme break the parser?", "What changed?", stats=everywhere).questions
    assert planned.dropped == ["acme"]
    assert "acme" not in planned.focus.lower() and planned.focused
    assert planned.unanswered() == [planned.first, planned.focus, "What changed?"]
    # With no word found everywhere there is no focus sentence to ask.
    assert not state("Why does acme break the parser?").questions.focused


def test_fusion_adds_each_pass_share_by_rank_and_keeps_each_pass_top():
    read = state("q?")
    read.fuse(["a", "b"], 1.0, CFG)
    read.fuse(["b"], 0.5, CFG)
    k = CFG.rrf_k
    assert read.fusion == pytest.approx({"a": 1 / (k + 1), "b": 1 / (k + 2) + 0.5 / (k + 1)})
    assert read.tops == [{"a", "b"}, {"b"}]
    assert read.corroborated() == ["b"]  # only b is in the top of two passes


def test_a_pass_top_is_its_first_corroborate_k_hits():
    read = state("q?")
    ids = [f"m{i}" for i in range(CFG.corroborate_k + 5)]
    read.fuse(ids, 1.0, CFG)
    assert read.tops == [set(ids[: CFG.corroborate_k])]


def test_found_counts_new_memories_and_keeps_each_ones_best_score():
    read = state("q?")
    assert read.found([record(1, 0.5), record(2, 0.9)]) == 2
    again = record(1, 0.8, text="the same memory, returned again")
    assert read.found([again, record(3, None)]) == 1
    assert read.best_score == {"m1": 0.8, "m2": 0.9, "m3": 0.0}
    assert read.seen["m1"].text == "memory 1"  # the first record seen is kept


def test_the_top_is_stable_only_when_it_did_not_change():
    read = state("q?")
    read.fuse(["a", "b"], 1.0, CFG)
    assert not read.settle(CFG.stable_top)  # nothing to compare with yet
    read.fuse(["a"], 1.0, CFG)
    assert read.settle(CFG.stable_top)
    read.fuse(["c", "d"], 5.0, CFG)
    assert not read.settle(2)


def test_a_read_starts_with_its_planned_questions_queued_and_their_words_used():
    request = ReadRequest(
        topic="t", questions=("Why does the parser fail?", "What broke the build?"), scopes=PROJECT
    )
    read = ReadState.start(request, NOW, None, CFG)
    assert read.queue == read.questions.queue(CFG)
    assert read.asked == 0 and read.previous_top is None and not read.fusion
    assert read.used_terms == {"pars", "fail", "broke", "build"}  # stemmed, as the index

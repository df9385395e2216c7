"""The reader: stop rules on a scripted view, the rest on the real embedded store."""

from __future__ import annotations

import inspect
import math
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executive.hooks.builtin import pre_spawn
from executive.memory.read import about, pack, plan, ranking
from executive.memory.read import reader as reader_module
from executive.memory.read.lexical import best_first
from executive.memory.read.reader import MAX_QUESTIONS, Reader, ReadRequest, Scope
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, ReadView
from executive.memory.store.local import LocalStore
from executive.memory.taxonomy import MemoryType
from tests.memory.conftest import fill, meta, scope
from tests.memory.payloads import partial

pytestmark = pytest.mark.anyio


class ScriptedView:
    """Answers each question from a script, so the stop rules can be driven exactly."""

    def __init__(self, answers) -> None:
        self.answers = answers
        self.asked: list[tuple[str, Filter]] = []

    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]:
        self.asked.append((query, where))
        return self.answers(query, where, len(self.asked))

    async def revision(self) -> int | None:
        return None  # no lexical index: the reader estimates word statistics from hits


def mem(i: int, score: float, text: str = "", **meta) -> MemoryRecord:
    return MemoryRecord(
        id=f"m{i}",
        text=text or f"memory {i}",
        app_id="demo",
        metadata={"type": "semantic", "confidence": 0.9, **meta},
        score=score,
    )


PROJECT = (Scope("project", app_ids=("demo",)),)


def request(n: int = 8, scopes=PROJECT, enough: int | None = 3) -> ReadRequest:
    questions = tuple(f"Question number {i}?" for i in range(n))
    return ReadRequest(topic="the demo", questions=questions, scopes=scopes, enough=enough)


async def test_stops_when_the_top_results_stop_changing():
    view = ScriptedView(lambda q, w, n: [mem(1, 0.3), mem(2, 0.2), mem(3, 0.1)])
    result = await Reader(view, user_id="u").read(request(enough=None))
    assert result.stop_reason == "the top results stopped changing"
    assert len(result.questions) == 3  # no rule stops the reader before three questions


async def test_stops_at_three_distinct_relevant_memories_above_the_floor():
    # m1..m3 come back every time (corroborated by two passes); a new one keeps the top moving.
    view = ScriptedView(lambda q, w, n: [mem(1, 0.6), mem(2, 0.5), mem(3, 0.4), mem(10 + n, 0.3)])
    result = await Reader(view, user_id="u").read(request())
    assert result.stop_reason.startswith("3 distinct relevant memories")
    assert len(result.questions) == 3
    assert {"m1", "m2", "m3"} <= result.relevant


async def test_a_budget_to_fill_is_counted_as_the_pack_counts_unless_told_otherwise():
    text = "The mirror resets the first connection of a day, so retry the fetch once. " * 8
    top = [mem(1, 0.6, text), mem(2, 0.5, text), mem(3, 0.4, text)]
    budget = sum(pack.entry_tokens(m) for m in top)  # ~650: what the three cost in a pack

    def answers(q, w, n):
        return [*top, mem(10 + n, 0.3)]  # the top three come back; a new one keeps moving

    fill = replace(request(enough=None), fill_tokens=budget)
    filled = await Reader(ScriptedView(answers), user_id="u").read(fill)
    assert filled.stop_reason == f"relevant memories fill {budget} tokens"
    # A consumer with its own yardstick (bench/retrieval.py) is held to it instead.
    cheap = replace(fill, entry_cost=lambda record: 1)
    unfilled = await Reader(ScriptedView(answers), user_id="u").read(cheap)
    assert unfilled.stop_reason != filled.stop_reason
    assert len(unfilled.questions) > len(filled.questions)


async def test_stops_after_eight_questions():
    view = ScriptedView(lambda q, w, n: [mem(n, 0.2)])  # always new, never relevant
    result = await Reader(view, user_id="u").read(request(12))
    assert len(result.questions) == MAX_QUESTIONS == 8
    assert result.stop_reason == "asked 8 questions"


async def test_refines_the_next_question_from_what_came_back():
    def answers(q, w, n):
        if n == 1:
            return [mem(1, 0.35, "Run 2026-11-02-demo-x1 failed with ECONNRESET on mirror-eu.")]
        return [mem(n, 0.2)]

    result = await Reader(ScriptedView(answers), user_id="u").read(request(1, enough=None))
    assert [h.refined for h in result.hops[:2]] == [False, True]
    second = result.hops[1]
    assert "ECONNRESET" in second.question and "mirror-eu" in second.question
    # A run id is a label: lent, it finds the memory it came from again, and nothing else.
    assert "2026-11-02-demo-x1" not in second.question
    assert second.question.startswith("Question number 0, in connection with")
    assert second.question.endswith("?") and second.why.startswith("refined from memory m1")


async def test_below_the_floor_and_expired_memories_are_left_out():
    past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    view = ScriptedView(
        lambda q, w, n: [mem(1, 0.9, confidence=0.65), mem(2, 0.8, expires_at=past), mem(3, 0.5)]
    )
    result = await Reader(view, user_id="u", floor=0.7).read(request(3))
    assert [m.id for m in result.memories] == ["m3"]
    assert all(w.min_confidence == 0.7 for _, w in view.asked)


async def test_each_scope_is_a_separate_search_and_results_merge():
    scopes = (
        Scope("project", app_ids=("demo",)),
        Scope("global", app_ids=("_global",), types=("principle",)),
    )
    view = ScriptedView(
        lambda q, w, n: (
            [mem(10 + n, 0.3)] if w.app_ids == ("demo",) else [mem(1, 0.31, type="principle")]
        )
    )
    result = await Reader(view, user_id="u").read(request(3, scopes))
    assert [w.app_ids for _, w in view.asked[:2]] == [("demo",), ("_global",)]
    assert result.searches == 2 * len(result.questions)
    assert "m1" in {m.id for m in result.memories} and "m11" in {m.id for m in result.memories}
    assert set(result.hops[0].returned) == {"project", "global"}


async def test_env_defaults_to_prod():
    view = ScriptedView(lambda q, w, n: [])
    await Reader(view, user_id="u").read(request(3))
    assert {w.env for _, w in view.asked} == {"prod"}


def test_no_write_method_is_reachable_from_the_reader():
    imported = set(vars(reader_module))
    assert not imported & {"Harvester", "Store", "LocalStore", "PlatformStore", "MemoryRuntime"}
    assert "harvester" not in inspect.getsource(reader_module).lower()
    reader = Reader(ReadView(object()), user_id="u")  # type: ignore[arg-type]
    reachable = {name for name in dir(reader) if not name.startswith("__")}
    assert not reachable & {"add", "update", "delete", "wipe", "harvester"}
    view = reader._view  # the one object it holds
    assert {n for n in dir(view) if not n.startswith("_")} == {
        "search",
        "get",
        "history",
        "list",
        "count",
        "revision",
        "search_scopes",
        "prepare",
        "words",
    }


async def test_the_reader_finds_what_a_step_needs_on_the_real_store(harvester, store: LocalStore):
    await harvester.add(
        [
            partial("principle"),
            partial("semantic", app_id="flaky-fetch"),
            partial(
                "procedural", app_id="greeting", metadata={"confidence": 0.65}
            ),  # below the floor
            partial(
                "semantic",
                app_id="flaky-fetch",
                text="Staging keys rotate monthly.",
                metadata={"env": "test"},
            ),
        ],
        principles=True,
    )
    request = plan.for_step(
        title="Fetch the release notes",
        slug="flaky-fetch",
        app_id="flaky-fetch",
        step_number=1,
        step_title="Fetch the notes",
        vendor="command",
        retry_attempt=2,
        last_error="error: ECONNRESET",
    )
    result = await Reader(ReadView(store), user_id="agent-test").read(request)
    texts = [m.text for m in result.memories]
    assert partial("principle")["text"] in texts
    assert partial("semantic")["text"] in texts
    assert all(m.confidence >= 0.7 for m in result.memories)
    assert all(m.metadata["env"] == "prod" for m in result.memories)
    assert 3 <= len(result.questions) <= 8
    trace = result.trace()
    assert trace["stop_reason"] and trace["questions"][0]["returned"]


class Slowed:
    """Every store call takes 200 ms longer, as on a machine busy with other work."""

    def __init__(self, inner, delay: float = 0.2) -> None:
        self._inner = inner
        self._delay = delay
        self.calls = 0

    def __getattr__(self, name):
        method = getattr(self._inner, name)

        async def slowed(*args, **kwargs):
            self.calls += 1
            await anyio.sleep(self._delay)
            return await method(*args, **kwargs)

        return slowed


def _fingerprint(result):
    # Scores to 6 places: numpy's dot products may differ in the last bits between calls.
    return (
        [(m.id, round(m.score or 0.0, 6)) for m in result.memories],
        result.questions,
        result.stop_reason,
        sorted(result.relevant),
    )


async def test_a_refinement_repeats_only_the_questions_first_words(store: LocalStore):
    await fill(store, 120)
    # Memories with words to lend (the fill's own are labels: numbers a refinement never lends).
    await store.add_many(
        [
            NewMemory(
                f"Lesson {i} of app-3: the harbor gateway {word} retries",
                scope(),
                meta(i, key=f"{i + 1000:032x}"),
            )
            for i, word in zip((3, 10, 17), ["throttles", "rejects", "delays"], strict=True)
        ]
    )
    opening = " ".join(f"word{i}" for i in range(40))
    request = plan.for_step(
        title="Learn the lesson of app-3",
        slug="app-3",
        app_id="app-3",
        step_number=1,
        step_title=f"How the harbor gateway retries {opening}",
        vendor="command",
    )
    result = await Reader(ReadView(store), user_id="agent-test").read(request)
    refined = [h.question for h in result.hops if h.refined]
    assert refined, "the long question was refined at least once"
    for question in refined:
        base, _, lent = question.partition(", in connection with ")
        assert len(base.split()) <= reader_module.REFINE_WORDS and lent.endswith("?")
        # The question's own words (or its focus sentence's), cut, not all forty of them.
        assert set(base.split()) <= set(request.questions[0].split())


async def test_a_slow_store_gives_the_same_memories_in_the_same_order(store: LocalStore):
    await fill(store, 120)
    request = plan.for_step(
        title="Learn the lesson of app-3",
        slug="app-3",
        app_id="app-3",
        step_number=1,
        step_title="Apply lesson 517",
        vendor="command",
    )
    now = datetime(2026, 12, 2, tzinfo=UTC)
    fast = await Reader(ReadView(store), user_id="agent-test", now=now).read(request)
    slow_view = Slowed(ReadView(store))
    slow = await Reader(slow_view, user_id="agent-test", now=now).read(request)
    assert fast.memories and len(fast.questions) >= 3
    assert slow_view.calls >= len(slow.questions)  # every question went through the slow store
    assert _fingerprint(slow) == _fingerprint(fast)


async def test_a_pack_is_the_same_bytes_on_an_idle_and_a_loaded_machine(store: LocalStore):
    await fill(store, 120)
    now = datetime(2026, 12, 2, tzinfo=UTC)
    requests = [
        plan.for_step(
            title=f"Learn the lesson of app-{i}",
            slug=f"app-{i}",
            app_id=f"app-{i}",
            step_number=1 + i % 2,
            step_title=f"Apply lesson {510 + i}",
            vendor="claude",
        )
        for i in range(4)
    ]

    async def packs() -> list[str]:
        reader = Reader(ReadView(store), user_id="agent-test", now=now)
        return [(await pre_spawn.build(reader, r))[0].markdown for r in requests]

    idle = await packs()
    # Two busy processes, one per core of the test machine; each says it started, so the
    # packs below are built while both spin (no sleep decides it).
    spin = "import sys; print('spinning', flush=True)\nwhile True: pass"
    busy = [
        subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        assert all(p.stdout is not None and p.stdout.readline() == "spinning\n" for p in busy)
        loaded = await packs()
        assert all(p.poll() is None for p in busy)  # still spinning when the last pack was made
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert all("### [" in pack for pack in idle)
    assert loaded == idle


async def test_the_planned_questions_are_embedded_in_one_batch_and_each_once(store: LocalStore):
    await fill(store, 40)
    embedder = store._memory.embedding_model
    encoded: list[list[str]] = []

    class Counting:
        def __init__(self, inner) -> None:
            self.inner = inner

        def encode(self, texts):
            encoded.append(list(texts))
            return self.inner.encode(texts)

    embedder._encoder = Counting(embedder._encoder)
    request = plan.for_step(
        title="Ship app-2",
        slug="app-2",
        app_id="app-2",
        step_number=2,
        step_title="Ship it",
        vendor="claude",
        retry_attempt=2,
        last_error="error: lesson 517 missing",
    )
    result = await Reader(ReadView(store), user_id="agent-test").read(request)
    # One batch before the first search: every question that needs no answer, the focus
    # sentence too (the step names app-2, a word in most of the project's memories).
    [focus] = [h.question for h in result.hops if h.why.startswith("focus")]
    first, *others = request.questions
    assert encoded[0] == [first, focus, *others, *(q for q, _ in request.closing)]
    refined = [h.question for h in result.hops if h.refined]
    assert encoded[1:] == [[q] for q in refined]  # each later question embedded once
    # Two scopes per question, one for the closing question (the global scope only).
    assert result.searches == 2 * (len(result.questions) - 1) + 1
    assert result.hops[-1].why == "closing" and set(result.hops[-1].returned) == {"global"}


def _rank_before(scores, seen, best, now):
    """The final ranking as it was: every candidate copied twice, ``rank_value`` on a copy."""

    def rank_value(record, now):
        score = record.score or 0.0
        try:
            bonus = ranking._TYPE_BONUS[MemoryType(record.type)]
        except ValueError:
            bonus = 0.0
        age = ranking.age_days(record, now)
        days = ranking._RECENCY_DAYS
        recency = ranking._RECENCY_BONUS * math.exp(-age / days) if age is not None else 0.0
        return score + bonus + recency

    top = max(scores.values(), default=1.0) or 1.0
    ranked = []
    for memory_id, score in scores.items():
        record = seen[memory_id]
        shown = record.with_score(best.get(memory_id))
        ranked.append((score / top + rank_value(shown.with_score(0.0), now), memory_id, shown))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [record for _, _, record in ranked]


@settings(max_examples=300, deadline=None)
@given(
    candidates=st.dictionaries(
        st.sampled_from([f"m{i}" for i in range(30)]),
        st.tuples(
            st.sampled_from([1 / 31, 1 / 32, 0.7 / 31, 1 / 31 + 0.5 / 35, 0.0]),  # RRF shares: ties
            st.sampled_from(["semantic", "principle", "episodic", "reflective", "procedural", "x"]),
            st.sampled_from([None, "2026-11-30T10:00:00+00:00", "2026-10-01", "not a date"]),
            st.one_of(st.none(), st.sampled_from([0.31, 0.5, 0.5000001])),
        ),
    ),
    limit=st.integers(1, 40),
)
def test_the_ranking_is_the_one_that_copied_every_candidate(candidates, limit):
    now = datetime(2026, 12, 2, tzinfo=UTC)
    seen = {
        m: MemoryRecord(id=m, text=m, metadata={"type": kind}, created_at=created)
        for m, (_, kind, created, _) in candidates.items()
    }
    scores = {m: fused for m, (fused, *_) in candidates.items()}
    best = {m: cosine for m, (*_, cosine) in candidates.items() if cosine is not None}
    after = reader_module._rank(scores, seen, best, now, limit)
    before = _rank_before(scores, seen, best, now)[:limit]
    assert [(r.id, r.score) for r in after] == [(r.id, r.score) for r in before]
    assert best_first(scores) == sorted(scores, key=lambda m: (-scores[m], m))


async def test_a_named_file_brings_a_question_about_the_files_beside_it():
    beside = mem(1, 0.6, "the units module rounds wrong", files=["src/weather/units.py"])

    def answers(query, where, n):
        return [beside] if n == 1 else []

    view = ScriptedView(answers)
    asks = replace(request(1, enough=None), paths=("src/weather/parser.py",))
    result = await Reader(view, user_id="u").read(asks)
    assert result.questions[1] == (
        "What do we know about src/weather/units.py: what was changed there, what failed, "
        "and what fixed it?"
    )
    assert result.hops[1].why == "files beside named ones"
    # Without a named path nothing is asked about files.
    plain = await Reader(ScriptedView(answers), user_id="u").read(request(1, enough=None))
    assert all("What do we know about" not in q for q in plain.questions)


def card(i: int, score: float, files: list[str], text: str = "") -> MemoryRecord:
    return mem(
        i, score, text or f"a run that changed {', '.join(files)}", type="episodic", files=files
    )


async def test_the_memories_about_the_best_ones_files_rank_right_after_it():
    # m1 answers best; m5 and m6 are about the file m1 changed, but their prose reads far
    # from the question: they are found by their files and ranked with m1, above m2-m4.
    pool = [
        card(1, 0.6, ["app/parser.py"]),
        card(2, 0.5, ["app/cli.py"]),
        card(3, 0.45, ["app/cli.py"]),
        card(4, 0.4, ["docs/x.md"]),
        card(5, 0.1, ["app/parser.py", "tests/test_parser.py"]),
        card(6, 0.05, ["app/parser.py"]),
    ]
    # No word index here: the memories about a file are looked for among those seen.
    view = ScriptedView(lambda q, w, n: sorted(pool, key=lambda m: -(m.score or 0)))
    result = await Reader(view, user_id="u").read(request(1, enough=None))
    order = [m.id for m in result.memories]
    assert order[0] == "m1" and set(order[1:3]) == {"m5", "m6"}
    assert result.promoted == {"m1", "m5", "m6"}
    [files] = [x for x in result.lexical if x.get("of") == "files"]
    assert files["files"] == ["app/parser.py"] and files["hits"] == 3


async def test_a_file_the_goal_names_by_its_module_brings_the_memories_about_it():
    pool = [card(1, 0.6, ["app/cli.py"]), card(2, 0.05, ["src/app/models/base.py"])]
    view = ScriptedView(lambda q, w, n: pool)
    asked = ReadRequest(
        topic="t",
        questions=("Why does models.base.ModelBase lose its attributes?",),
        scopes=PROJECT,
        named=about.modules_in("models.base.ModelBase"),
    )
    result = await Reader(view, user_id="u").read(asked)
    # m2, about the file the goal names, ranks first; m1 (about another file) after it.
    assert result.promoted == {"m2"} and [m.id for m in result.memories][:2] == ["m2", "m1"]


def test_a_long_goal_asks_no_focus_sentence():
    from executive.memory.read.lexical import SampleStats
    from executive.memory.read.reading import LONG_QUESTION_WORDS, Questions, ReaderConfig

    stats = SampleStats()
    stats.add([mem(i, 0.1, "the weather app parses feeds") for i in range(10)])
    short = ReadRequest(topic="t", questions=("How does the weather app parse?",), scopes=PROJECT)
    assert Questions.plan(short, stats, ReaderConfig()).focused
    words = " ".join(["parse the weather app feed"] * LONG_QUESTION_WORDS)
    long = ReadRequest(topic="t", questions=(words,), scopes=PROJECT)
    assert not Questions.plan(long, stats, ReaderConfig()).focused


async def test_a_long_question_asks_at_most_its_refinements():
    # Every answer lends new words, so a short question refines until its stop rules; a long
    # one (a coding goal) stops after two refinements: its own words carry its specifics.
    from executive.memory.read.reading import LONG_QUESTION_WORDS

    def answers(q, w, n):
        return [mem(n, 0.5, f"lesson {n}: the gateway{n} rejects retries{n} from host{n}")]

    long = " ".join(["why does the gateway reject retries"] * (LONG_QUESTION_WORDS // 6 + 1))
    asked = ReadRequest(topic="t", questions=(long,), scopes=PROJECT, enough=None)
    result = await Reader(ScriptedView(answers), user_id="u").read(asked)
    assert sum(h.refined for h in result.hops) == 2
    assert result.stop_reason == "a long question: 2 refinements"

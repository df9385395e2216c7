"""The reader: read-only, multi-hop retrieval in plain English.

It is handed a store's read view and nothing else. For one request it asks full-sentence
questions and fuses what every pass returns (weighted reciprocal-rank fusion):

1. the planned questions, best angle first: each a dense search of every scope (scopes are
   searched separately and merged: stores do not OR them well) plus a BM25 pass over the
   scopes' memories (no store call);
2. the *focus* sentence, right after the first question: the question without the words
   found in a large share of the scope (a project's slug, a person's name), which pull a
   similarity search toward every short memory that mentions them;
3. refinements: the best memory not used as a seed yet lends its most specific new words
   (names, identifiers, error codes) to the next question: the store does not walk from
   fact to fact, so the questions do.

From the third question on it stops when the fused top ten stop changing, or when enough
memories are corroborated (in the top twenty of two passes) to serve the consumer; it never
asks more than eight. A consumer may add *closing* questions, asked last of named scopes
only, whatever the stop rules said (Hook B: the rules that apply, of the global scope).
Its work is bounded by counts only (questions, hits per question): no clock decides what it
asks or returns, so the same store and request give the same memories in the same order on
an idle or a loaded machine. Speed comes from doing less: every question that depends on
no answer (the planned ones, the focus sentence, the closing ones) is embedded in one batch,
each question once for all scopes, and the lexical pass reads the store's word index, kept
as memories are written (``store/wordindex.py``), never built on a pack's way. It returns
the memories ranked
(fused rank, then type priority, then recency) and a trace: every question, why it was
asked, what it returned, the lexical passes, and why it stopped.

The algorithm and its measurements are in the README (benchmarks) and ``bench/retrieval.py``.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from executive.memory import about
from executive.memory.lexical import SampleStats, best_first, term_counts
from executive.memory.pack import entry_tokens
from executive.memory.ranking import admissible, rank_bonus
from executive.memory.refine import focus_sentence, refinement, ubiquitous
from executive.memory.store.base import (
    Filter,
    MemoryRecord,
    StoreReader,
    Words,
    prepare,
    search_scopes,
    words,
)
from executive.memory.taxonomy import AGENT_ID
from executive.memory.words import terms

MAX_QUESTIONS = 8
MIN_QUESTIONS = 3


@dataclass(frozen=True)
class ReaderConfig:
    # Flat in every sweep (0.1-0.3 all equal): a word in more than this share of the
    # scope's memories (and in at least ``ubiquitous_min``) discriminates nothing.
    ubiquitous_share: float = 0.2
    ubiquitous_min: int = 5
    w_question: float = 1.0
    w_angle: float = 0.7  # the plan's other angles
    w_lexical: float = 1.0
    w_focus: float = 1.0
    w_focus_entity: float = 0.5  # focus hits that still name the dropped words
    w_refine: float = 0.5  # refinements add candidates; they must not outvote the question
    rrf_k: int = 30
    first_k: int = 100  # alone, one question's hits fill a 2,000-token pack
    hop_k: int = 50
    corroborate_k: int = 20
    stable_top: int = 10
    seed_terms: int = 4
    limit: int = 100


@dataclass(frozen=True)
class Scope:
    """One separate search: an app scope and, optionally, types."""

    name: str
    app_ids: tuple[str, ...] = ()
    types: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadRequest:
    topic: str  # what the consumer is about to do, in a few words (for the trace)
    questions: tuple[str, ...]  # the planned questions, best angle first
    scopes: tuple[Scope, ...]
    identifiers: tuple[str, ...] = ()  # literal ids the questions already name
    # Asked last, whatever the stop rules said, each of the named scopes only: a question
    # that matters in one scope (the rules that apply: global) but is noise in the others.
    closing: tuple[tuple[str, tuple[str, ...]], ...] = ()
    env: str | None = "prod"
    # Enough to stop: this many corroborated memories (the original's "three relevant")...
    enough: int | None = 3
    # ...or, for a consumer that wants a full budget, corroborated memories filling it,
    # each costing what ``entry_cost`` says (the pack's own count unless the consumer has
    # its own yardstick, as a benchmark does).
    fill_tokens: int | None = None
    entry_cost: Callable[[MemoryRecord], int] = entry_tokens
    # Files the consumer's work names: the project's memories about files beside them
    # (the same folder) get a question of their own after the first.
    paths: tuple[str, ...] = ()


@dataclass
class Hop:
    question: str
    why: str
    refined: bool
    returned: dict[str, list[tuple[str, float]]]  # scope name -> [(id, score)]
    new: int
    ms: float


@dataclass
class ReadResult:
    memories: list[MemoryRecord]  # best first; admissible only
    hops: list[Hop] = field(default_factory=list)
    lexical: list[dict[str, object]] = field(default_factory=list)
    relevant: set[str] = field(default_factory=set)  # corroborated by two passes
    # Each returned memory's fused score as a share of the best one's (1.0 for the best):
    # how strongly every pass together points at it, whatever the store's scores.
    strength: dict[str, float] = field(default_factory=dict)
    stop_reason: str = ""
    searches: int = 0
    ms: float = 0.0

    @property
    def questions(self) -> list[str]:
        return [hop.question for hop in self.hops]

    def trace(self) -> dict[str, object]:
        return {
            "questions": [
                {
                    "question": h.question,
                    "why": h.why,
                    "refined": h.refined,
                    "returned": {
                        s: [[i, round(sc, 3)] for i, sc in r[:10]] for s, r in h.returned.items()
                    },
                    "new": h.new,
                    "ms": round(h.ms, 1),
                }
                for h in self.hops
            ],
            "lexical": self.lexical,
            "stop_reason": self.stop_reason,
            "searches": self.searches,
            "memories": [m.id for m in self.memories[:20]],
            "ms": round(self.ms, 1),
        }


class Reader:
    """Read-only by construction: it holds a read view and nothing that writes."""

    def __init__(
        self,
        view: StoreReader,
        *,
        user_id: str,
        floor: float = 0.7,
        now: datetime | None = None,
        config: ReaderConfig | None = None,
    ) -> None:
        self._view = view
        self._user_id = user_id
        self._floor = floor
        self._now = now
        self._config = config or ReaderConfig()

    def _where(self, scope: Scope, env: str | None) -> Filter:
        return Filter(
            user_id=self._user_id,
            agent_id=AGENT_ID,
            app_ids=scope.app_ids,
            types=scope.types,
            env=env,
            min_confidence=self._floor,
        )

    async def _index(self, request: ReadRequest, now: datetime) -> Words | None:
        """BM25 over the request's scopes: the store's word index, through their filters."""
        wheres = [self._where(scope, request.env) for scope in request.scopes]
        return await words(self._view, wheres, self._floor, now)

    async def read(self, request: ReadRequest) -> ReadResult:
        cfg = self._config
        started = time.perf_counter()  # for the trace's timings only: nothing decides on it
        now = self._now or datetime.now(UTC)
        planned = list(dict.fromkeys(q for q in request.questions if q.strip()))[:MAX_QUESTIONS]
        first = planned[0] if planned else request.topic
        closing = list(request.closing)[: MAX_QUESTIONS - 1]
        index = await self._index(request, now)
        stats: Words | SampleStats = index if index is not None else SampleStats()
        seen: dict[str, MemoryRecord] = {}
        best_score: dict[str, float] = {}
        # Weighted reciprocal-rank fusion, summed as each pass comes in: every memory's
        # shares add up in pass order, as a sum over all passes at the end would.
        fusion: defaultdict[str, float] = defaultdict(float)
        tops: list[set[str]] = []
        result = ReadResult(memories=[])

        def fuse(ids: list[str], weight: float) -> None:
            for position, memory_id in enumerate(ids):
                fusion[memory_id] += weight / (cfg.rrf_k + position + 1)
            tops.append(set(ids[: cfg.corroborate_k]))

        async def dense(
            question: str,
            k: int,
            weight: float,
            why: str,
            refined: bool,
            scopes: tuple[Scope, ...] = request.scopes,
        ) -> list[str]:
            hop_started = time.perf_counter()
            returned: dict[str, list[tuple[str, float]]] = {}
            merged: dict[str, MemoryRecord] = {}
            # One call for every scope: the question is embedded once.
            wheres = [self._where(scope, request.env) for scope in scopes]
            answers = await search_scopes(self._view, question, wheres, k)
            for scope, answer in zip(scopes, answers, strict=True):
                found = [r for r in answer if admissible(r, self._floor, now)]
                returned[scope.name] = [(r.id, r.score or 0.0) for r in found]
                for r in found:
                    if r.id not in merged or (r.score or 0) > (merged[r.id].score or 0):
                        merged[r.id] = r
            batch = sorted(merged.values(), key=lambda r: (-(r.score or 0.0), r.id))
            if isinstance(stats, SampleStats):
                stats.add(batch)
            new = 0
            for r in batch:
                new += r.id not in best_score
                seen.setdefault(r.id, r)
                best_score[r.id] = max(best_score.get(r.id, -1.0), r.score or 0.0)
            ids = [r.id for r in batch]
            fuse(ids, weight)
            result.searches += len(scopes)
            result.hops.append(
                Hop(
                    question,
                    why,
                    refined,
                    returned,
                    new,
                    (time.perf_counter() - hop_started) * 1000,
                )
            )
            return ids

        def lexical(
            query_terms: list[str], k: int, weight: float, boost: dict[str, float] | None = None
        ) -> None:
            if index is None or not query_terms:
                return
            ids = index.search(query_terms, k, boost)
            for memory_id in ids:
                if memory_id not in seen and (found := index.get(memory_id)) is not None:
                    seen[memory_id] = found
            fuse(ids, weight)
            result.lexical.append({"terms": list(dict.fromkeys(query_terms)), "hits": len(ids)})

        first_terms = terms(first)
        queue: list[tuple[str, float, str]] = [(first, cfg.w_question, "the question")]
        focus = focus_sentence(first, stats, cfg.ubiquitous_share, cfg.ubiquitous_min)
        dropped = [
            t
            for t in dict.fromkeys(first_terms)
            if ubiquitous(stats, t, cfg.ubiquitous_share, cfg.ubiquitous_min)
        ]
        queue += [(q, cfg.w_angle, "a planned angle") for q in planned[1:]]
        focused = bool(dropped and terms(focus))
        # Every question that depends on no answer, embedded in one batch.
        await prepare(
            self._view,
            [first, *([focus] if focused else []), *planned[1:], *(q for q, _ in closing)],
        )

        asked = 0
        used_terms = set(first_terms) | {t for q in planned for t in terms(q)}
        used_seeds: set[str] = set()
        previous_top: set[str] | None = None
        while asked < MAX_QUESTIONS - len(closing):
            if queue:
                question, weight, why = queue.pop(0)
                await dense(question, cfg.first_k, weight, why, refined=False)
                lexical(terms(question), cfg.first_k, cfg.w_lexical * weight)
                if asked == 0 and focused:
                    # The focus sentence goes second: the stop rules wait for three questions.
                    found = await dense(
                        focus,
                        cfg.first_k,
                        cfg.w_focus,
                        f"focus: without {', '.join(dropped)}",
                        refined=False,
                    )
                    asked += 1
                    need = set(dropped)
                    entity = [m for m in found if need.issubset(term_counts(seen[m].text))]
                    fuse(entity, cfg.w_focus_entity)
                    result.lexical.append(
                        {"terms": sorted(need), "hits": len(entity), "of": "focus hits"}
                    )
            else:
                ranking = best_first(fusion)
                seed, picked = refinement(ranking, seen, stats, used_seeds, used_terms, cfg)
                if seed is None:
                    result.stop_reason = "no more questions: nothing new to ask about"
                    break
                new_terms = [t for _, t in picked]
                used_terms.update(new_terms)
                base = (focus if terms(focus) else first).rstrip(" ?.")
                question = f"{base}, in connection with {', '.join(s for s, _ in picked)}?"
                await dense(
                    question,
                    cfg.hop_k,
                    cfg.w_refine,
                    f"refined from memory {seed[:8]}",
                    refined=True,
                )
                lexical(
                    first_terms + new_terms, cfg.hop_k, cfg.w_refine, dict.fromkeys(new_terms, 0.5)
                )
            asked += 1
            if asked == 1 and request.paths:
                pool = index.records() if index is not None else seen.values()
                neighbours = about.near(request.paths, pool)
                if neighbours:
                    queue.append(
                        (about.files_question(neighbours), cfg.w_angle, "files beside named ones")
                    )
            ranking = best_first(fusion)
            top = set(ranking[: cfg.stable_top])
            stable, previous_top = top == previous_top, top
            if asked < MIN_QUESTIONS:
                continue
            votes = Counter(m for s in tops for m in s)
            corroborated = [m for m, v in votes.items() if v >= 2]
            if request.enough is not None and len(corroborated) >= request.enough:
                result.stop_reason = (
                    f"{len(corroborated)} distinct relevant memories above the floor"
                )
                break
            if (
                request.fill_tokens is not None
                and sum(request.entry_cost(seen[m]) for m in corroborated) >= request.fill_tokens
            ):
                result.stop_reason = f"relevant memories fill {request.fill_tokens} tokens"
                break
            if stable:
                result.stop_reason = "the top results stopped changing"
                break
        if not result.stop_reason:
            result.stop_reason = f"asked {asked} questions"
        for question, names in closing:
            scopes = tuple(s for s in request.scopes if s.name in names)
            if scopes:
                await dense(question, cfg.first_k, cfg.w_angle, "closing", False, scopes)
        result.relevant = {m for m, v in Counter(m for s in tops for m in s).items() if v >= 2}
        result.memories = _rank(fusion, seen, best_score, now, cfg.limit)
        top = max(fusion.values(), default=1.0) or 1.0
        result.strength = {m.id: fusion[m.id] / top for m in result.memories}
        result.ms = (time.perf_counter() - started) * 1000
        return result


def _rank(
    scores: Mapping[str, float],
    seen: Mapping[str, MemoryRecord],
    best: dict[str, float],
    now: datetime,
    limit: int,
) -> list[MemoryRecord]:
    """Fused rank (normalised), nudged by type priority and recency; cosine kept for display.

    Only the memories returned are copied (with their best cosine).
    """
    top = max(scores.values(), default=1.0) or 1.0
    ranked = [
        (score / top + rank_bonus(seen[memory_id], now), memory_id)
        for memory_id, score in scores.items()
    ]
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [seen[memory_id].with_score(best.get(memory_id)) for _, memory_id in ranked[:limit]]


def scope_names(scopes: Sequence[Scope]) -> str:
    return ", ".join(scope.name for scope in scopes)

"""The reader: read-only, multi-hop retrieval in plain English.

It is handed a store's read view and nothing else. For one request it asks full-sentence
questions and fuses what every pass returns (weighted reciprocal-rank fusion):

1. the planned questions, best angle first: each a dense search of every scope (searched
   separately and merged: stores do not OR them well) plus a BM25 pass over the scopes'
   memories (no store call);
2. the *focus* sentence (:mod:`refine`), right after the first question;
3. refinements (:mod:`refine`): the store does not walk from fact to fact, so the
   questions do.

From the third question on it stops when the fused top ten stop changing, or when enough
memories are corroborated (in the top twenty of two passes) to serve the consumer; it never
asks more than eight. A consumer may add *closing* questions, asked last of named scopes
only, whatever the stop rules said (Hook B: the rules that apply, of the global scope).
Its work is bounded by counts only (questions, hits per question): no clock decides what it
asks or returns, so the same store and request give the same memories in the same order on
an idle or a loaded machine. Speed comes from doing less: every question that depends on
no answer is embedded in one batch, each once for all scopes, and the lexical pass reads
the store's word index, kept as memories are written (``store/wordindex.py``), never built
on a pack's way. It returns the memories ranked (fused rank, then type priority, then
recency) and a trace: every question, why it was asked, what it returned, the lexical
passes, and why it stopped.

The algorithm and its measurements are in the README (benchmarks) and ``bench/retrieval.py``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from executive.memory.read import about
from executive.memory.read.lexical import SampleStats, best_first, term_counts
from executive.memory.read.ranking import admissible, rank_bonus
from executive.memory.read.reading import (
    MAX_QUESTIONS,
    MIN_QUESTIONS,
    REFINE_WORDS,
    Hop,
    ReaderConfig,
    ReadRequest,
    ReadResult,
    ReadState,
    Scope,
)
from executive.memory.read.refine import refinement
from executive.memory.read.words import terms
from executive.memory.store.base import (
    Filter,
    MemoryRecord,
    StoreReader,
    prepare,
    search_scopes,
    words,
)
from executive.memory.taxonomy import AGENT_ID


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

    async def read(self, request: ReadRequest) -> ReadResult:
        started = time.perf_counter()  # for the trace's timings only: nothing decides on it
        now = self._now or datetime.now(UTC)
        # BM25 over the request's scopes: the store's word index, through their filters.
        wheres = [self._where(scope, request.env) for scope in request.scopes]
        index = await words(self._view, wheres, self._floor, now)
        state = ReadState.start(request, now, index, self._config)
        await prepare(self._view, state.questions.unanswered())
        await self._ask(state)
        await self._close(state)
        return self._finish(state, started)

    async def _ask(self, state: ReadState) -> None:
        """The planned questions, the focus sentence and refinements, until a stop rule."""
        while state.asked < MAX_QUESTIONS - len(state.questions.closing):
            if state.queue:
                await self._ask_planned(state, *state.queue.pop(0))
            elif state.questions.long and state.refined >= self._config.long_refinements:
                state.result.stop_reason = f"a long question: {state.refined} refinements"
                return
            elif not await self._ask_refined(state):
                state.result.stop_reason = "no more questions: nothing new to ask about"
                return
            state.asked += 1
            if state.asked == 1 and state.request.paths:
                self._queue_files(state)
            stable = state.settle(self._config.stable_top)
            if state.asked < MIN_QUESTIONS:
                continue
            reason = _stop_reason(state, stable)
            if reason is not None:
                state.result.stop_reason = reason
                return
        state.result.stop_reason = f"asked {state.asked} questions"

    async def _ask_planned(self, state: ReadState, question: str, weight: float, why: str) -> None:
        cfg = self._config
        await self._dense(state, question, cfg.first_k, weight, why)
        self._lexical(state, terms(question), cfg.first_k, cfg.w_lexical * weight)
        if state.asked == 0:
            self._about_files(state)  # seeded by the question alone, before any other pass
        if state.asked == 0 and state.questions.focused:
            # The focus sentence goes second: the stop rules wait for three questions.
            await self._ask_focus(state)

    async def _ask_focus(self, state: ReadState) -> None:
        """The focus sentence; its hits that still name the dropped words count again."""
        cfg = self._config
        dropped = state.questions.dropped
        why = f"focus: without {', '.join(dropped)}"
        found = await self._dense(state, state.questions.focus, cfg.first_k, cfg.w_focus, why)
        state.asked += 1
        need = set(dropped)
        entity = [m for m in found if need.issubset(term_counts(state.seen[m].text).terms)]
        state.fuse(entity, cfg.w_focus_entity, cfg)
        state.result.lexical.append(
            {"terms": sorted(need), "hits": len(entity), "of": "focus hits"}
        )

    async def _ask_refined(self, state: ReadState) -> bool:
        """The next refinement, or False when no memory has a new word to lend."""
        cfg = self._config
        ranking = best_first(state.fusion)
        seed, picked = refinement(
            ranking, state.seen, state.stats, state.used_seeds, state.used_terms, cfg
        )
        if seed is None:
            return False
        new_terms = [t for _, t in picked]
        state.used_terms.update(new_terms)
        questions = state.questions
        base = questions.focus if terms(questions.focus) else questions.first
        base = " ".join(base.split()[:REFINE_WORDS]).rstrip(" ?.,;:")
        question = f"{base}, in connection with {', '.join(s for s, _ in picked)}?"
        state.refined += 1
        why = f"refined from memory {seed[:8]}"
        await self._dense(state, question, cfg.hop_k, cfg.w_refine, why, refined=True)
        boost = dict.fromkeys(new_terms, 0.5)
        self._lexical(state, questions.first_terms + new_terms, cfg.hop_k, cfg.w_refine, boost)
        return True

    def _about_files(self, state: ReadState) -> None:
        """The memories about the files the work names, or else those the best memory so
        far is about (no store call): a past change to a file is what a change to it now
        most needs, and memories that share its files are found by their files, not by how
        their prose reads. They rank ahead of the rest (``w_files`` on their normalised
        score), the best of them first. A scope of memories that name no files (a chat's)
        costs nothing here."""
        named = state.request.named
        sharing = [r for r in state.pool() if about.naming(r, named)] if named else []
        why: dict[str, object] = {"named": list(named)}
        if not sharing:
            ranking = best_first(state.fusion)
            seed = state.seen.get(ranking[0]) if ranking else None
            hot = set(about.files_of(seed)) if seed is not None else set()
            if not hot:
                return
            sharing = [r for r in state.pool() if not hot.isdisjoint(about.files_of(r))]
            why = {"files": sorted(hot)}
        for record in sharing:
            state.seen.setdefault(record.id, record)
            state.fusion[record.id] += 0.0  # a candidate, ranked by its bonus and its passes
        state.promoted = {r.id for r in sharing}
        state.result.lexical.append({**why, "hits": len(sharing), "of": "files"})

    def _queue_files(self, state: ReadState) -> None:
        """A question about the files beside the ones the consumer's work names."""
        neighbours = about.near(state.request.paths, state.pool())
        if neighbours:
            state.queue.append(
                (about.files_question(neighbours), self._config.w_angle, "files beside named ones")
            )

    async def _close(self, state: ReadState) -> None:
        """The consumer's closing questions, each of its named scopes only."""
        cfg = self._config
        for question, names in state.questions.closing:
            scopes = tuple(s for s in state.request.scopes if s.name in names)
            if scopes:
                await self._dense(
                    state, question, cfg.first_k, cfg.w_angle, "closing", scopes=scopes
                )

    def _finish(self, state: ReadState, started: float) -> ReadResult:
        result = state.result
        result.relevant = set(state.corroborated())
        result.promoted = set(state.promoted)
        result.memories = _rank(
            state.fusion,
            state.seen,
            state.best_score,
            state.now,
            self._config.limit,
            dict.fromkeys(state.promoted, self._config.w_files),
        )
        result.ms = (time.perf_counter() - started) * 1000
        return result

    async def _dense(
        self,
        state: ReadState,
        question: str,
        k: int,
        weight: float,
        why: str,
        *,
        refined: bool = False,
        scopes: tuple[Scope, ...] | None = None,
    ) -> list[str]:
        """One similarity search of every scope (the question embedded once), fused."""
        hop_started = time.perf_counter()
        scopes = state.request.scopes if scopes is None else scopes
        wheres = [self._where(scope, state.request.env) for scope in scopes]
        answers = await search_scopes(self._view, question, wheres, k)
        returned, batch = _merge(scopes, answers, self._floor, state.now)
        if isinstance(state.stats, SampleStats):
            state.stats.add(batch)
        new = state.found(batch)
        ids = [r.id for r in batch]
        state.fuse(ids, weight, self._config)
        state.result.searches += len(scopes)
        ms = (time.perf_counter() - hop_started) * 1000
        state.result.hops.append(Hop(question, why, refined, returned, new, ms))
        return ids

    def _lexical(
        self,
        state: ReadState,
        query_terms: list[str],
        k: int,
        weight: float,
        boost: dict[str, float] | None = None,
    ) -> None:
        """One BM25 pass over the store's word index (no store call), fused."""
        index = state.index
        if index is None or not query_terms:
            return
        ids = index.search(query_terms, k, boost)
        for memory_id in ids:
            if memory_id not in state.seen and (found := index.get(memory_id)) is not None:
                state.seen[memory_id] = found
        state.fuse(ids, weight, self._config)
        state.result.lexical.append({"terms": list(dict.fromkeys(query_terms)), "hits": len(ids)})


def _stop_reason(state: ReadState, stable: bool) -> str | None:
    """Why to stop asking after this question, or None to go on."""
    request = state.request
    corroborated = state.corroborated()
    if request.enough is not None and len(corroborated) >= request.enough:
        return f"{len(corroborated)} distinct relevant memories above the floor"
    if (
        request.fill_tokens is not None
        and sum(request.entry_cost(state.seen[m]) for m in corroborated) >= request.fill_tokens
    ):
        return f"relevant memories fill {request.fill_tokens} tokens"
    if stable:
        return "the top results stopped changing"
    return None


def _merge(
    scopes: Sequence[Scope], answers: list[list[MemoryRecord]], floor: float, now: datetime
) -> tuple[dict[str, list[tuple[str, float]]], list[MemoryRecord]]:
    """Each scope's admissible hits (for the trace) and all of them merged, best first."""
    returned: dict[str, list[tuple[str, float]]] = {}
    merged: dict[str, MemoryRecord] = {}
    for scope, answer in zip(scopes, answers, strict=True):
        found = [r for r in answer if admissible(r, floor, now)]
        returned[scope.name] = [(r.id, r.score or 0.0) for r in found]
        for r in found:
            if r.id not in merged or (r.score or 0) > (merged[r.id].score or 0):
                merged[r.id] = r
    return returned, sorted(merged.values(), key=lambda r: (-(r.score or 0.0), r.id))


def _rank(
    scores: Mapping[str, float],
    seen: Mapping[str, MemoryRecord],
    best: dict[str, float],
    now: datetime,
    limit: int,
    bonus: Mapping[str, float] | None = None,
) -> list[MemoryRecord]:
    """Fused rank (normalised), nudged by type priority and recency, plus any ``bonus`` (the
    memories about the best one's files); cosine kept for display.

    Only the memories returned are copied (with their best cosine).
    """
    top = max(scores.values(), default=1.0) or 1.0
    extra = bonus or {}
    ranked = [
        (score / top + rank_bonus(seen[memory_id], now) + extra.get(memory_id, 0.0), memory_id)
        for memory_id, score in scores.items()
    ]
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [seen[memory_id].with_score(best.get(memory_id)) for _, memory_id in ranked[:limit]]


def scope_names(scopes: Sequence[Scope]) -> str:
    return ", ".join(scope.name for scope in scopes)

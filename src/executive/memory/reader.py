"""The reader: read-only, multi-hop retrieval in plain English.

It is handed a store's read view and nothing else. Given what the consumer is about to do,
it asks 3 to 8 full-sentence questions from different angles, refines each next question
from what the last ones returned (the store does not walk from fact to fact, so iterating
*is* the multi-hop), searches each scope separately and merges (stores do not OR scopes
well), and stops when the top results stop changing, when it holds three distinct relevant
memories above the floor, or after eight questions. It returns the ranked memories and a
trace of every question, what it returned and why it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from executive.memory.ranking import admissible, rank
from executive.memory.refine import refinement
from executive.memory.store.base import Filter, MemoryRecord, StoreReader
from executive.memory.taxonomy import AGENT_ID

MAX_QUESTIONS = 8
MIN_QUESTIONS = 3
# A memory this similar to a question is "relevant" for the stop rule. MiniLM cosine:
# paraphrases of the same fact score 0.6+, clearly related facts 0.4+, noise below 0.25.
RELEVANT_SCORE = 0.4
ENOUGH_RELEVANT = 3
# "The top results stopped changing": the best few ids of a hop equal the previous hop's.
STABLE_TOP = 3


@dataclass(frozen=True)
class Scope:
    """One separate search: an app scope and, optionally, types."""

    name: str
    app_ids: tuple[str, ...] = ()
    types: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadRequest:
    topic: str  # what the consumer is about to do, in a few words (for the trace)
    questions: tuple[str, ...]  # the planned questions, best angle first (3..8)
    scopes: tuple[Scope, ...]
    identifiers: tuple[str, ...] = ()  # literal ids to weave into refinements
    env: str | None = "prod"


@dataclass
class Hop:
    question: str
    refined: bool
    returned: dict[str, list[tuple[str, float]]]  # scope name -> [(id, score)]
    new: int
    ms: float


@dataclass
class ReadResult:
    memories: list[MemoryRecord]  # ranked, best first; admissible only
    hops: list[Hop] = field(default_factory=list)
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
                    "refined": h.refined,
                    "returned": {
                        s: [[i, round(sc, 3)] for i, sc in r] for s, r in h.returned.items()
                    },
                    "new": h.new,
                    "ms": round(h.ms, 1),
                }
                for h in self.hops
            ],
            "stop_reason": self.stop_reason,
            "searches": self.searches,
            "memories": [m.id for m in self.memories],
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
        top_k: int = 10,
        now: datetime | None = None,
    ) -> None:
        self._view = view
        self._user_id = user_id
        self._floor = floor
        self._top_k = top_k
        self._now = now

    async def read(self, request: ReadRequest) -> ReadResult:
        started = time.perf_counter()
        now = self._now or datetime.now(UTC)
        planned = list(dict.fromkeys(q for q in request.questions if q.strip()))[:MAX_QUESTIONS]
        found: dict[str, MemoryRecord] = {}
        result = ReadResult(memories=[])
        previous_top: list[str] | None = None
        queue: list[tuple[str, bool]] = [(q, False) for q in planned]
        asked: set[str] = set()

        while queue and len(result.hops) < MAX_QUESTIONS:
            question, refined = queue.pop(0)
            if question in asked:
                continue
            asked.add(question)
            hop_started = time.perf_counter()
            returned, batch = await self._ask(question, request)
            result.searches += len(request.scopes)
            new = 0
            for record in batch:
                best = found.get(record.id)
                if best is None:
                    new += 1
                if best is None or (record.score or 0) > (best.score or 0):
                    found[record.id] = record
            result.hops.append(
                Hop(question, refined, returned, new, (time.perf_counter() - hop_started) * 1000)
            )

            top = [r.id for r in rank(batch, now)[:STABLE_TOP]]
            relevant = [r for r in found.values() if (r.score or 0) >= RELEVANT_SCORE]
            # The plan always gets its first three angles; the stop rules apply from there.
            if len(result.hops) >= MIN_QUESTIONS:
                if len(relevant) >= ENOUGH_RELEVANT:
                    result.stop_reason = (
                        f"{len(relevant)} distinct relevant memories above the floor"
                    )
                    break
                if top == previous_top:
                    result.stop_reason = "the top results stopped changing"
                    break
            previous_top = top
            follow_up = refinement(
                request.topic, question, rank(batch, now), asked, request.identifiers
            )
            if follow_up:
                # The first two planned angles (the task, the principles) go first; after
                # them each refinement goes to the front of the queue: the next hop.
                queue.insert(max(0, 2 - len(result.hops)), (follow_up, True))
        if not result.stop_reason:
            result.stop_reason = (
                f"asked {MAX_QUESTIONS} questions"
                if len(result.hops) >= MAX_QUESTIONS
                else "no more questions"
            )
        result.memories = rank(found.values(), now)
        result.ms = (time.perf_counter() - started) * 1000
        return result

    async def _ask(
        self, question: str, request: ReadRequest
    ) -> tuple[dict[str, list[tuple[str, float]]], list[MemoryRecord]]:
        returned: dict[str, list[tuple[str, float]]] = {}
        batch: list[MemoryRecord] = []
        for scope in request.scopes:
            where = Filter(
                user_id=self._user_id,
                agent_id=AGENT_ID,
                app_ids=scope.app_ids,
                types=scope.types,
                env=request.env,
                min_confidence=self._floor,
            )
            records = [
                r
                for r in await self._view.search(question, where, self._top_k)
                if admissible(r, self._floor)
            ]
            returned[scope.name] = [(r.id, r.score or 0.0) for r in records]
            batch += records
        return returned, batch


def scope_names(scopes: Sequence[Scope]) -> str:
    return ", ".join(scope.name for scope in scopes)

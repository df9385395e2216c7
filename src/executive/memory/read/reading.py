"""What one read is asked, what it holds while it asks, and what it returns.

The reader (:mod:`executive.memory.read.reader`) asks; these are the values it works over: the
request and the configuration, the questions planned before any answer comes back, the
state every hop reads and adds to (the fused scores, the memories seen, each pass's top,
the trace), and the result.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from executive.memory.read.lexical import SampleStats, best_first
from executive.memory.read.pack import entry_tokens
from executive.memory.read.refine import focus_sentence, ubiquitous
from executive.memory.read.words import terms
from executive.memory.store.base import MemoryRecord, Words

MAX_QUESTIONS = 8
# A refinement repeats the question's first words, not all of it: a goal's long opening
# cost a model run each time and found nothing more on either development set. 14, not 20:
# LoCoMo's rows the same, the coding set's recall 0.601 -> 0.604, a pack at 1,000 memories
# p95 47-49 -> 43-44 ms; at 10 a LoCoMo category lost a question within the first ten.
REFINE_WORDS = 14
MIN_QUESTIONS = 3
# A question longer than this carries its own specifics (a chat question is a dozen words; a
# coding goal a few hundred): no focus sentence, and few refinements.
LONG_QUESTION_WORDS = 60


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
    w_files: float = 0.5  # on the normalised score of the memories about the best one's files
    rrf_k: int = 30
    first_k: int = 100  # alone, one question's hits fill a 2,000-token pack
    hop_k: int = 50
    corroborate_k: int = 20
    stable_top: int = 10
    seed_terms: int = 4
    limit: int = 100
    # A long question (a coding goal) asks at most this many refinements: its tail of hops
    # cost a pack 20 ms at p95 and found nothing the first two had not (coding benchmark,
    # development split: recall 0.788 either way, p95 101 -> 83 ms).
    long_refinements: int = 2


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
    # Files the work names, paths or their ends (``models/base.py``, from a module named
    # ``models.base``): the memories about them rank beside the best memory's files.
    named: tuple[str, ...] = ()


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
    promoted: set[str] = field(default_factory=set)  # about the files of the best memory
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


@dataclass(frozen=True)
class Questions:
    """What one read asks before any answer comes back."""

    first: str
    first_terms: list[str]
    planned: list[str]  # deduplicated, at most MAX_QUESTIONS
    closing: list[tuple[str, tuple[str, ...]]]
    focus: str  # the first question without its ubiquitous words
    dropped: list[str]  # those words

    @classmethod
    def plan(cls, request: ReadRequest, stats: Words | SampleStats, cfg: ReaderConfig) -> Questions:
        planned = list(dict.fromkeys(q for q in request.questions if q.strip()))[:MAX_QUESTIONS]
        first = planned[0] if planned else request.topic
        first_terms = terms(first)
        share, minimum = cfg.ubiquitous_share, cfg.ubiquitous_min
        return cls(
            first=first,
            first_terms=first_terms,
            planned=planned,
            closing=list(request.closing)[: MAX_QUESTIONS - 1],
            focus=focus_sentence(first, stats, share, minimum),
            dropped=[t for t in dict.fromkeys(first_terms) if ubiquitous(stats, t, share, minimum)],
        )

    @property
    def focused(self) -> bool:
        """Whether the focus sentence is asked: it dropped words and kept some, and the
        question is short enough that a few words can dominate it (in a goal of a hundred
        words a project's name is one of many: the pass cost a coding pack 20 ms and its
        first entry's relevance, 0.714 -> 0.643 on the development split)."""
        return bool(self.dropped and terms(self.focus)) and not self.long

    @property
    def long(self) -> bool:
        return len(self.first.split()) > LONG_QUESTION_WORDS

    def queue(self, cfg: ReaderConfig) -> list[tuple[str, float, str]]:
        """The planned questions as (question, weight, why), best angle first."""
        return [(self.first, cfg.w_question, "the question")] + [
            (q, cfg.w_angle, "a planned angle") for q in self.planned[1:]
        ]

    def unanswered(self) -> list[str]:
        """Every question that depends on no answer, in the order they are asked."""
        focus = [self.focus] if self.focused else []
        return [self.first, *focus, *self.planned[1:], *(q for q, _ in self.closing)]


@dataclass
class ReadState:
    """One read's evidence and progress: what every hop reads and adds to."""

    request: ReadRequest
    now: datetime
    index: Words | None
    stats: Words | SampleStats
    questions: Questions
    # Weighted reciprocal-rank fusion, summed as each pass comes in: every memory's
    # shares add up in pass order, as a sum over all passes at the end would.
    fusion: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    seen: dict[str, MemoryRecord] = field(default_factory=dict)
    best_score: dict[str, float] = field(default_factory=dict)  # each memory's best cosine
    tops: list[set[str]] = field(default_factory=list)  # each pass's top, for corroboration
    result: ReadResult = field(default_factory=lambda: ReadResult(memories=[]))  # the trace
    queue: list[tuple[str, float, str]] = field(default_factory=list)
    asked: int = 0
    used_terms: set[str] = field(default_factory=set)
    used_seeds: set[str] = field(default_factory=set)
    refined: int = 0  # refinements asked
    previous_top: set[str] | None = None
    promoted: set[str] = field(default_factory=set)  # about the best memory's files

    @classmethod
    def start(
        cls, request: ReadRequest, now: datetime, index: Words | None, cfg: ReaderConfig
    ) -> ReadState:
        """Nothing asked yet: the planned questions queued, their words used."""
        stats: Words | SampleStats = index if index is not None else SampleStats()
        questions = Questions.plan(request, stats, cfg)
        return cls(
            request,
            now,
            index,
            stats,
            questions,
            queue=questions.queue(cfg),
            used_terms=set(questions.first_terms)
            | {t for q in questions.planned for t in terms(q)},
        )

    def pool(self) -> Iterable[MemoryRecord]:
        """Every memory this read can reach without a store call: the scopes' word index,
        or what its passes have brought so far."""
        return self.index.records() if self.index is not None else self.seen.values()

    def fuse(self, ids: list[str], weight: float, cfg: ReaderConfig) -> None:
        for position, memory_id in enumerate(ids):
            self.fusion[memory_id] += weight / (cfg.rrf_k + position + 1)
        self.tops.append(set(ids[: cfg.corroborate_k]))

    def found(self, batch: list[MemoryRecord]) -> int:
        """Record a dense pass's hits; how many no pass had returned before."""
        new = 0
        for r in batch:
            new += r.id not in self.best_score
            self.seen.setdefault(r.id, r)
            self.best_score[r.id] = max(self.best_score.get(r.id, -1.0), r.score or 0.0)
        return new

    def settle(self, stable_top: int) -> bool:
        """Whether the fused top stayed what it was after the previous question."""
        top = set(best_first(self.fusion)[:stable_top])
        stable, self.previous_top = top == self.previous_top, top
        return stable

    def corroborated(self) -> list[str]:
        """The memories in the top of two passes or more."""
        votes = Counter(m for s in self.tops for m in s)
        return [m for m, v in votes.items() if v >= 2]

"""Benchmark: does the pack carry the experience a coding task needs? (SWE-ContextBench Lite)

    python bench/experience.py CASES_DIR [--related-ids FILE] [--exclude-ids FILE]
                               [--harvest experience|outcome] [--strategies pack,plain_10,...]
                               [--sessions N] [--transcript-cache DIR]

CASES_DIR is the ``cases`` folder of the public repository ``jiayuanz3/SWEContextBench``
(paper arXiv 2602.08316; it has no licence file, so it is read from a local copy and never
copied here). Two of its folders are read (``swecb.py``):

* ``SWEContextBench Lite Past Experience/*.jsonl``: 300 Claude Code session transcripts,
  each of which solved one SWE-bench Lite task. Each becomes a completed bundle of the
  project named by its repository (``django/django`` → app ``django``), whose goal is the
  task's problem statement (in the session's first user message) and whose worker record is
  the session; Hook C's real path (``run_memory_hook``: the built-in engine, the harvester,
  the envelope) writes its memories into a fresh embedded store. ``--harvest outcome`` gives
  Hook C only what it saw before issue 26 (that the run passed); ``experience`` (the
  default) also gives it the digest of the session (``workers.record.experience``).
* ``SWEContextBench Lite/*.json``: 99 later related tasks. Each asks for a pack: a new bundle
  of the same project whose goal is the task's problem statement, through Hook B's real
  path (``pre_spawn.request_for`` then ``pre_spawn.build``, with the daemon's index cache).

Relevance is fixed and mechanical: a task's gold files are the files its ``patch`` changes,
documentation and tests left out (paths under ``doc/``, ``docs/``, ``test/``, ``tests/``,
``testing/``, names starting ``CHANGES``, ``AUTHORS`` or ``README``, and ``.rst``, ``.txt``,
``.md`` files). A past session is relevant when it edited (Edit, MultiEdit or Write) a gold
file; a path in a session is what follows ``testbed/`` and an optional ``<owner>__<name>/``
(files outside ``testbed/`` are the session's scratch files). Tasks without a relevant
session are reported, not scored.

Strategies: ``pack`` (Hook B); plain search of the same memories with the problem statement
(``plain_10`` its first 10, ``plain_matched`` cut at the token count of that task's pack,
``plain_2k`` cut at 2,000 tokens); ``oracle``, every memory of every relevant session (the
ceiling); ``transcripts``, BM25 and MiniLM fused over chunks of the raw session transcripts
within the same 2,000 tokens (``transcripts.py``: what a user who indexes transcripts gets).
Per strategy, over the scored tasks: *file hit*, the share of tasks whose text names a gold
file; *session hit*, the share with an entry from a relevant session; *session recall*, the
mean share of relevant sessions represented; *precision*, the mean share of the answer's
tokens (each entry as ``pack.entry_tokens`` counts it) that come from relevant sessions (an
empty answer: 0); *first-entry hit*, the share whose first entry, in the order the answer
shows its entries (the pack by type, then rank; the others by rank), is from a relevant
session (``first_ranked_hit``: the same of its best-ranked entry, which only the pack shows
elsewhere); ``empty``, how many answers held no entry; tokens (p50, p95) and ms (p50, p95 of
one whole request).

Every request is timed cold: the store keeps an LRU of question embeddings
(``embedder.Embedder``), so a strategy asking the problem statement after another would time
a cache hit. It is emptied before each strategy's request; ``transcripts`` embeds its question
with the encoder itself. One untimed pack per run opens the index and loads the model.

Tune only on the development split (``--related-ids
../shared/data/swecontextbench/dev-related-ids.txt``); the held-out tasks are the rest
(``--exclude-ids`` with the same file). The store always holds all 300 sessions. Prints one
JSON object on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"

import anyio

from executive.hooks.builtin import pre_spawn
from executive.hooks.context import (
    PostRunContext,
    PreSpawnContext,
    Step,
    ValidationReport,
    VerifierReport,
    WorkItem,
)
from executive.hooks.runner import HookEnv, run_memory_hook
from executive.logs import configure_logging
from executive.memory.read.pack import entry_tokens, render_entry
from executive.memory.read.reader import Reader
from executive.memory.read.tokens import PACK_TOKEN_CAP
from executive.memory.runtime import MemoryRuntime
from executive.memory.store.base import Filter, MemoryRecord, Store
from executive.memory.store.embedder import EMBEDDERS, encoder, model_file
from executive.settings import load_settings
from executive.workers.record.digest import digest
from executive.workers.record.experience import FileChange
from executive.workspace.ledger import WorkLedger
from executive.workspace.scaffold import GO_LIVE, scaffold
from swecb import (
    PAST,
    RELATED,
    Session,
    app_of,
    load_session,
    load_tasks,
    read_ids,
    relevant_sessions,
    repo_path,
)
from transcripts import CHUNK_TOKENS, POOL, RRF_K, Transcripts

USER = "swecb-bench"
STRATEGIES = ("pack", "plain_10", "plain_matched", "plain_2k", "oracle", "transcripts")
SCORES = (
    "file_hit",
    "session_hit",
    "session_recall",
    "precision",
    "first_entry_hit",
    "first_ranked_hit",
)


# --- bundles as the loop makes them ------------------------------------------------------------
def work_item(app: str, slug: str, statement: str) -> tuple[WorkItem, Step]:
    title = " ".join(statement.splitlines()[0].split())[:120] if statement else slug
    item = WorkItem(
        id=slug,
        title=title,
        description=statement[:2000],
        bundle_slug=slug,
        app_id=app,
        source=f"workspace/completed/{slug}/PROMPT.md",
    )
    return item, Step(number=1, title=title)


def experience_of(session: Session) -> Any:
    """The session's digest, with the files it edited as the daemon's own walk of the
    folder would have found them changed (a transcript has no folder to compare)."""
    found = digest(session.reading, relative=repo_path)
    changes = [FileChange(path=f.path, change=f.change) for f in found.files]
    return digest(session.reading, relative=repo_path, changes=changes)


def post_run_context(session: Session, harvest: str) -> PostRunContext:
    """The one place a session becomes what Hook C is told: with ``outcome``, what it saw
    before the experience digest; with ``experience``, the digest of the session too."""
    slug = f"{session.instance.split('__')[-1].lower()}-{session.id[:8]}"
    item, step = work_item(session.app, slug, session.statement)
    return PostRunContext(
        work_item=item,
        current_step=step,
        vendor="claude",
        validation_report=ValidationReport(
            passed=True,
            verifiers=[VerifierReport(verifier="swe-bench tests", result="PASS")],
        ),
        harvest_run=session.run_id,
        run_ended_at=f"{session.day}T12:00:00+00:00",
        contract_id=f"session-{session.id}",
        experience=experience_of(session) if harvest == "experience" else None,
    )


# --- scoring ------------------------------------------------------------------------------------
def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] if ordered else 0.0


def cut(records: list[MemoryRecord], tokens: int) -> list[MemoryRecord]:
    kept, used = [], 0
    for record in records:
        cost = entry_tokens(record)
        if used + cost > tokens:
            break
        kept.append(record)
        used += cost
    return kept


@dataclass
class Answer:
    text: str
    memories: list[MemoryRecord]
    tokens: int
    ms: float


def shown_first(answer: Answer) -> MemoryRecord | None:
    """The entry a reader meets first: the one whose rendering comes first in the answer's
    text (the pack shows its entries by type, then rank), else the first in rank order."""
    placed = [(answer.text.find(render_entry(m)), n) for n, m in enumerate(answer.memories)]
    shown = [p for p in placed if p[0] >= 0] or [(0, n) for _, n in placed]
    return answer.memories[min(shown)[1]] if shown else None


def score(
    answer: Answer, gold: list[str], relevant: set[str], run_of: dict[str, str]
) -> dict[str, float]:
    sessions = [run_of.get(m.run_id or "") for m in answer.memories]
    found = set(sessions) & relevant
    costs = [entry_tokens(m) for m in answer.memories]
    from_relevant = sum(c for c, s in zip(costs, sessions, strict=True) if s in relevant)
    first = shown_first(answer)
    ranked = answer.memories[0] if answer.memories else None
    return {
        "file_hit": float(any(path in answer.text for path in gold)),
        "session_hit": float(bool(found)),
        "session_recall": len(found) / len(relevant),
        "precision": from_relevant / sum(costs) if costs else 0.0,
        "first_entry_hit": float(first is not None and run_of.get(first.run_id or "") in relevant),
        "first_ranked_hit": float(
            ranked is not None and run_of.get(ranked.run_id or "") in relevant
        ),
    }


def summary(rows: list[dict[str, float]], answers: list[Answer]) -> dict[str, Any]:
    def mean(key: str) -> float:
        return round(statistics.mean(r[key] for r in rows), 3) if rows else 0.0

    tokens = [float(a.tokens) for a in answers]
    ms = [a.ms for a in answers]
    return {
        **{key: mean(key) for key in SCORES},
        "empty": sum(not a.memories for a in answers),
        "tokens": {"p50": percentile(tokens, 50), "p95": percentile(tokens, 95)},
        "ms": {"p50": round(percentile(ms, 50), 1), "p95": round(percentile(ms, 95), 1)},
    }


# --- the strategies -----------------------------------------------------------------------------
Strategy = Callable[..., Awaitable[Answer]]


async def timed(make: Callable[[], Awaitable[tuple[str, list[MemoryRecord], int]]]) -> Answer:
    started = time.perf_counter()
    text, memories, tokens = await make()
    return Answer(text, memories, tokens, (time.perf_counter() - started) * 1000)


def render(records: list[MemoryRecord]) -> str:
    return "\n\n".join(render_entry(r) for r in records)


def forget_questions(store: Store) -> None:
    """Empty the store's LRU of question embeddings, so the next request embeds its own.

    Reached through the store's private embedder on purpose: the daemon has no reason to
    forget, and a bench that silently timed cache hits would be worse than one that stops.
    """
    cache = getattr(getattr(store, "_embedder", None), "_cache", None)
    if cache is None:
        raise SystemExit(f"cannot reach the question cache of {type(store).__name__}")
    cache.clear()


def strategies(runtime: MemoryRuntime, view: Any, corpus: Transcripts) -> dict[str, Strategy]:
    async def pack(item: WorkItem, step: Step, **_: Any) -> Answer:
        async def make() -> tuple[str, list[MemoryRecord], int]:
            reader = Reader(view, user_id=USER, floor=runtime.settings.confidence_floor)
            ctx = PreSpawnContext(work_item=item, current_step=step, vendor="claude")
            built, _ = await pre_spawn.build(reader, pre_spawn.request_for(ctx))
            return built.markdown, built.entries, built.tokens

        return await timed(make)

    def plain(limit: Callable[[int], tuple[int | None, int | None]]) -> Strategy:
        async def run(item: WorkItem, step: Step, pack_tokens: int = 0, **_: Any) -> Answer:
            count, tokens = limit(pack_tokens)

            async def make() -> tuple[str, list[MemoryRecord], int]:
                where = Filter(user_id=USER, app_ids=(item.app_id,), min_confidence=0.7)
                found = await view.search(item.description, where, count or 100)
                kept = cut(found, tokens) if tokens is not None else found[:count]
                return render(kept), kept, sum(entry_tokens(r) for r in kept)

            return await timed(make)

        return run

    async def transcripts(item: WorkItem, step: Step, **_: Any) -> Answer:
        project = corpus.project(item.app_id or "")  # indexed on first use: not timed

        async def make() -> tuple[str, list[MemoryRecord], int]:
            kept = cut(corpus.search(project, item.description), PACK_TOKEN_CAP)
            return render(kept), kept, sum(entry_tokens(r) for r in kept)

        return await timed(make)

    return {
        "pack": pack,
        "plain_10": plain(lambda _: (10, None)),
        "plain_matched": plain(lambda t: (None, t)),
        "plain_2k": plain(lambda _: (None, PACK_TOKEN_CAP)),
        "transcripts": transcripts,
    }


async def oracle(relevant: set[str], by_session: dict[str, list[MemoryRecord]]) -> Answer:
    memories = [m for s in sorted(relevant) for m in by_session.get(s, [])]
    return Answer(render(memories), memories, sum(entry_tokens(m) for m in memories), 0.0)


# --- the run ------------------------------------------------------------------------------------
def seed_ids(seed: int = 0) -> None:
    """Name new memories from a seeded generator instead of ``uuid.uuid4``'s randomness.

    Ranking breaks an exact tie by a memory's id, so with random ids two runs of the same code
    could keep different entries (dev precision 0.348 one run, 0.355 the next). Seeded, the
    harvest names the same memories the same way every run and the figures repeat exactly.
    The bench's process only: the daemon keeps mem0's own ids.
    """
    rng = random.Random(seed)
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)


async def harvest_all(env: HookEnv, sessions: list[Session], harvest: str) -> None:
    for n, session in enumerate(sessions, 1):
        result = await run_memory_hook("post-run-harvest", post_run_context(session, harvest), env)
        if result.outcome != "ok":
            raise SystemExit(f"Hook C failed on session {session.id}: {result.error}")
        if n % 50 == 0:
            print(f"harvested {n}/{len(sessions)} sessions", file=sys.stderr, flush=True)


def home_for(tmp: Path) -> Path:
    home = scaffold(tmp / "home").home
    with (home / ".env.executive").open("a") as env_file:
        for key, value in {**GO_LIVE, "V3_MEM0_USER_ID": USER, "EXECUTIVE_STORE": "local"}.items():
            env_file.write(f"{key}={value}\n")
    return home


async def main(args: argparse.Namespace) -> dict[str, Any]:
    cases: Path = args.cases
    paths = sorted((cases / PAST).glob("*.jsonl"))[: args.sessions or None]
    sessions = [s for s in map(load_session, paths) if s is not None]
    tasks = load_tasks(cases / RELATED, read_ids(args.related_ids), read_ids(args.exclude_ids))
    print(f"{len(sessions)} sessions, {len(tasks)} related tasks", file=sys.stderr, flush=True)
    chosen = [s for s in args.strategies.split(",") if s]
    unknown = set(chosen) - set(STRATEGIES)
    if unknown:
        raise SystemExit(
            f"unknown strategies: {', '.join(sorted(unknown))}; from {', '.join(STRATEGIES)}"
        )

    with tempfile.TemporaryDirectory(prefix="swecb-") as tmp:
        home = home_for(Path(tmp))
        settings = load_settings(home)
        runtime = MemoryRuntime(settings)
        try:
            env = HookEnv(settings, runtime, WorkLedger(home / "ledgers" / "work-ledger.jsonl"))
            started = time.perf_counter()
            seed_ids()
            await harvest_all(env, sessions, args.harvest)
            view = await runtime.view()
            memories = await view.list(Filter(user_id=USER))
            print(
                f"{len(memories)} memories in {time.perf_counter() - started:.0f}s",
                file=sys.stderr,
                flush=True,
            )
            model = model_file(EMBEDDERS[settings.embedder], settings.models_dir)
            corpus = Transcripts(sessions, encoder(model), model, args.transcript_cache)
            bench = Bench(runtime, await runtime.store(), view, corpus, sessions, memories)
            report = await bench.measure(tasks, chosen)
        finally:
            await runtime.close()
    report.update(
        {
            "harvest": args.harvest,
            "memories": len(memories),
            "sessions": len(sessions),
            "embedder": settings.embedder,
            "transcript_chunks": corpus.chunks,
            "protocol": protocol(args),
        }
    )
    return report


def protocol(args: argparse.Namespace) -> dict[str, str]:
    return {
        "cases": str(args.cases),
        "related_ids": str(args.related_ids) if args.related_ids else "all",
        "exclude_ids": str(args.exclude_ids) if args.exclude_ids else "none",
        "gold": "files the patch changes, minus doc/, docs/, test/, tests/, testing/, "
        "CHANGES*, AUTHORS*, README*, *.rst, *.txt, *.md",
        "relevant": "a past session that edited (Edit, MultiEdit, Write) a gold file",
        "tokens": "each entry as the pack counts it (pack.entry_tokens)",
        "plain": "store search of the problem statement in the project's scope, confidence >= 0.7",
        "precision": "share of the answer's entry tokens from relevant sessions (empty: 0)",
        "first_entry_hit": "the first entry shown (the pack: by type, then rank) is from a "
        "relevant session",
        "first_ranked_hit": "the best-ranked entry is from a relevant session",
        "timing": "cold: the question-embedding cache emptied before every request",
        "transcripts": f"the project's transcript chunks of {CHUNK_TOKENS} tokens, BM25 and "
        f"MiniLM (first {POOL} each) fused by reciprocal rank (k {RRF_K}), cut at "
        f"{PACK_TOKEN_CAP} tokens",
    }


class Bench:
    """The scoring loop: every chosen strategy on every task that has a relevant session."""

    def __init__(
        self,
        runtime: MemoryRuntime,
        store: Store,
        view: Any,
        corpus: Transcripts,
        sessions: list[Session],
        memories: list[MemoryRecord],
    ) -> None:
        self.store = store
        self.sessions = sessions
        self.run_of = {s.run_id: s.id for s in sessions}
        self.by_session: dict[str, list[MemoryRecord]] = {}
        for memory in sorted(memories, key=lambda m: (m.run_id or "", m.type, m.id)):
            if memory.run_id in self.run_of:
                self.by_session.setdefault(self.run_of[memory.run_id], []).append(memory)
        self.runs = strategies(runtime, view, corpus)
        self.warm = False

    async def measure(self, tasks: list[dict[str, Any]], chosen: list[str]) -> dict[str, Any]:
        rows: dict[str, list[dict[str, float]]] = {s: [] for s in chosen}
        answers: dict[str, list[Answer]] = {s: [] for s in chosen}
        per_task: dict[str, dict[str, dict[str, float]]] = {}
        unscored = []
        for task in tasks:
            gold, relevant = relevant_sessions(task, self.sessions)
            if not relevant:
                unscored.append(task["instance_id"])
                continue
            scored = await self.task(task, chosen, gold, relevant)
            for name, (answer, row) in scored.items():
                rows[name].append(row)
                answers[name].append(answer)
            per_task[task["instance_id"]] = {
                name: {k: round(v, 3) for k, v in row.items()} for name, (_, row) in scored.items()
            }
            print(
                f"{task['instance_id']}: {len(relevant)} relevant sessions",
                file=sys.stderr,
                flush=True,
            )
        return {
            "strategies": {name: summary(rows[name], answers[name]) for name in chosen},
            "tasks_scored": len(per_task),
            "tasks_unscored": len(unscored),
            "unscored": unscored,
            "ids": list(per_task),
            "per_task": per_task,
        }

    async def task(
        self, task: dict[str, Any], chosen: list[str], gold: list[str], relevant: set[str]
    ) -> dict[str, tuple[Answer, dict[str, float]]]:
        slug = f"{task['instance_id'].split('__')[-1].lower()}-next"
        item, step = work_item(app_of(task["repo"]), slug, task["problem_statement"])
        if not self.warm:  # the first request opens the index: a warm-up, not timed
            await self.runs["pack"](item, step)
            self.warm = True
        out, pack_tokens = {}, 0
        for name in chosen:
            if name == "oracle":
                answer = await oracle(relevant, self.by_session)
            else:
                forget_questions(self.store)  # cold: no strategy profits from another's embed
                answer = await self.runs[name](item, step, pack_tokens=pack_tokens)
            if name == "pack":
                pack_tokens = answer.tokens
            out[name] = (answer, score(answer, gold, relevant, self.run_of))
        return out


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cases", type=Path, help="the 'cases' folder of a copy of SWEContextBench")
    parser.add_argument(
        "--related-ids", type=Path, help="one related instance id a line (default: all 99)"
    )
    parser.add_argument(
        "--exclude-ids",
        type=Path,
        help="leave these related ids out (the development ids: the held-out split)",
    )
    parser.add_argument("--harvest", choices=("experience", "outcome"), default="experience")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument(
        "--sessions", type=int, default=0, help="only the first N sessions (smoke runs)"
    )
    parser.add_argument(
        "--transcript-cache",
        type=Path,
        help="keep the transcript chunks' vectors here between runs (see transcripts.py)",
    )
    return parser.parse_args()


if __name__ == "__main__":
    given = arguments()
    if not (given.cases / PAST).is_dir():
        raise SystemExit(
            f"{given.cases / PAST} is not there. Fetch the public repository "
            "jiayuanz3/SWEContextBench and pass its 'cases' folder, e.g.\n"
            "  git clone https://github.com/jiayuanz3/SWEContextBench /tmp/swecb && "
            "python bench/experience.py /tmp/swecb/cases --related-ids "
            "../shared/data/swecontextbench/dev-related-ids.txt"
        )
    configure_logging(fmt="json", level="warning", stream=sys.stderr)
    print(json.dumps(anyio.run(main, given), indent=2))

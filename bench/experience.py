"""Benchmark: does the pack carry the experience a coding task needs? (SWE-ContextBench Lite)

    python bench/experience.py CASES_DIR [--related-ids FILE] [--harvest experience|outcome]
                               [--strategies pack,plain_10,...] [--sessions N]

CASES_DIR is the ``cases`` folder of the public repository ``jiayuanz3/SWEContextBench``
(paper arXiv 2602.08316; it has no licence file, so it is read from a local copy and never
copied here). Two of its folders are read:

* ``SWEContextBench Lite Past Experience/*.jsonl``: 300 Claude Code session transcripts,
  each of which solved one SWE-bench Lite task. Each becomes a completed bundle of the
  project named by its repository (``django/django`` → app ``django``), whose goal is the
  task's problem statement (in the session's first user message) and whose worker record is
  the session; Hook C's real path (``run_memory_hook``: the built-in engine, the harvester,
  the envelope) writes its memories into a fresh embedded store. ``--harvest outcome`` gives
  Hook C only what it saw before issue 26 (that the run passed); ``experience`` (the
  default) also gives it the digest of the session (``workers.experience``).
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

Per strategy (``pack``; plain search of the same memories with the problem statement:
``plain_10`` its first 10, ``plain_matched`` cut at the token count of that task's pack,
``plain_2k`` cut at 2,000 tokens; ``oracle``: every memory of every relevant session, the
ceiling): *file hit*, the share of tasks whose text names a gold file; *session hit*, the
share with a memory from a relevant session; *session recall*, the mean share of relevant
sessions represented; tokens (p50, p95; an entry costs what it costs in a pack) and ms (p50,
p95 of one whole request). Tune only on the development split
(``../shared/data/swecontextbench/dev-related-ids.txt``); the store always holds all 300
sessions. Prints one JSON object on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"

import anyio

from executive import relpath
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
from executive.memory.store.base import Filter, MemoryRecord
from executive.settings import load_settings
from executive.workers import runlog
from executive.workers.digest import digest
from executive.workers.experience import FileChange
from executive.workspace.ledger import WorkLedger
from executive.workspace.scaffold import GO_LIVE, scaffold

PAST = "SWEContextBench Lite Past Experience"
RELATED = "SWEContextBench Lite"
USER = "swecb-bench"
STRATEGIES = ("pack", "plain_10", "plain_matched", "plain_2k", "oracle")
EDITS = ("Edit", "MultiEdit", "Write")
_TESTBED = re.compile(r"(?:^|/)testbed/(?:[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+/)?(.+)$")
_FIELD = re.compile(r"^\s*(instance_id|repo):\s*(\S+)\s*$", re.MULTILINE)
_STATEMENT = re.compile(r"^\s*problem_statement:\s?(.*)", re.MULTILINE | re.DOTALL)
_NOT_GOLD_DIRS = ("doc", "docs", "test", "tests", "testing")
_NOT_GOLD_NAMES = ("CHANGES", "AUTHORS", "README")
_NOT_GOLD_SUFFIXES = (".rst", ".txt", ".md")


# --- the data ----------------------------------------------------------------------------------
def repo_path(raw: str) -> str | None:
    """``./swebench_9_15/testbed/django__django/django/utils/text.py`` → ``django/utils/text.py``."""
    found = _TESTBED.search(raw)
    return relpath.normal(found.group(1)) if found else None


def app_of(repo: str) -> str:
    """``django/django`` → ``django``; ``scikit-learn/scikit-learn`` → ``scikit-learn``."""
    return re.sub(r"[^a-z0-9]+", "-", repo.split("/")[-1].lower()).strip("-")


def is_gold(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return not (
        any(p in _NOT_GOLD_DIRS for p in parts[:-1])
        or name.startswith(_NOT_GOLD_NAMES)
        or name.endswith(_NOT_GOLD_SUFFIXES)
    )


def gold_files(patch: str) -> list[str]:
    changed = re.findall(r"^diff --git a/(\S+) b/\S+$", patch, re.MULTILINE)
    return sorted({p for p in changed if is_gold(p)})


@dataclass
class Session:
    id: str
    instance: str
    app: str
    statement: str
    day: str
    reading: runlog.Reading
    edited: set[str] = field(default_factory=set)

    @property
    def run_id(self) -> str:
        return f"{self.day}-{self.instance.split('__')[-1].lower()}-{self.id[:8]}"


def load_session(path: Path) -> Session | None:
    with path.open("rb") as handle:
        raw = handle.read().splitlines()
    reading = runlog.read_lines(raw)
    fields = dict(_FIELD.findall(reading.task))
    statement = _STATEMENT.search(reading.task)
    if "instance_id" not in fields or "repo" not in fields or statement is None:
        return None
    day = next(
        (m.group(1) for line in raw if (m := re.search(rb'"timestamp":"(\d{4}-\d\d-\d\d)', line))),
        b"2025-01-01",
    )
    edited = set()
    for event in reading.events:
        if isinstance(event, runlog.ToolCall) and event.name in EDITS:
            path_in = event.input.get("file_path")
            found = repo_path(path_in) if isinstance(path_in, str) else None
            if found:
                edited.add(found)
    return Session(
        id=path.stem,
        instance=fields["instance_id"],
        app=app_of(fields["repo"]),
        statement=statement.group(1).strip(),
        day=day.decode() if isinstance(day, bytes) else day,
        reading=reading,
        edited=edited,
    )


def load_tasks(folder: Path, ids: list[str] | None) -> list[dict[str, Any]]:
    tasks = []
    for path in sorted(folder.glob("*.json")):
        task = json.loads(path.read_text())
        if ids is None or task["instance_id"] in ids:
            tasks.append(task)
    if ids is not None:
        missing = sorted(set(ids) - {t["instance_id"] for t in tasks})
        if missing:
            raise SystemExit(f"related ids not in {folder}: {', '.join(missing[:5])}")
    return tasks


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


def score(
    answer: Answer, gold: list[str], relevant: set[str], run_of: dict[str, str]
) -> dict[str, float]:
    found = {run_of.get(m.run_id or "") for m in answer.memories} & relevant
    return {
        "file_hit": float(any(path in answer.text for path in gold)),
        "session_hit": float(bool(found)),
        "session_recall": len(found) / len(relevant),
    }


def summary(rows: list[dict[str, float]], answers: list[Answer]) -> dict[str, Any]:
    def mean(key: str) -> float:
        return round(statistics.mean(r[key] for r in rows), 3) if rows else 0.0

    tokens = [float(a.tokens) for a in answers]
    ms = [a.ms for a in answers]
    return {
        "file_hit": mean("file_hit"),
        "session_hit": mean("session_hit"),
        "session_recall": mean("session_recall"),
        "tokens": {"p50": percentile(tokens, 50), "p95": percentile(tokens, 95)},
        "ms": {"p50": round(percentile(ms, 50), 1), "p95": round(percentile(ms, 95), 1)},
    }


# --- the run ------------------------------------------------------------------------------------
async def harvest_all(env: HookEnv, sessions: list[Session], harvest: str) -> None:
    for n, session in enumerate(sessions, 1):
        result = await run_memory_hook("post-run-harvest", post_run_context(session, harvest), env)
        if result.outcome != "ok":
            raise SystemExit(f"Hook C failed on session {session.id}: {result.error}")
        if n % 50 == 0:
            print(f"harvested {n}/{len(sessions)} sessions", file=sys.stderr, flush=True)


def strategies(runtime: MemoryRuntime, view: Any) -> dict[str, Callable[..., Awaitable[Answer]]]:
    async def timed(make: Callable[[], Awaitable[tuple[str, list[MemoryRecord], int]]]) -> Answer:
        started = time.perf_counter()
        text, memories, tokens = await make()
        return Answer(text, memories, tokens, (time.perf_counter() - started) * 1000)

    async def pack(item: WorkItem, step: Step, **_: Any) -> Answer:
        async def make() -> tuple[str, list[MemoryRecord], int]:
            reader = Reader(
                view,
                user_id=USER,
                floor=runtime.settings.confidence_floor,
            )
            ctx = PreSpawnContext(work_item=item, current_step=step, vendor="claude")
            built, _ = await pre_spawn.build(reader, pre_spawn.request_for(ctx))
            return built.markdown, built.entries, built.tokens

        return await timed(make)

    def plain(
        limit: Callable[[int], tuple[int | None, int | None]],
    ) -> Callable[..., Awaitable[Answer]]:
        async def run(item: WorkItem, step: Step, pack_tokens: int = 0, **_: Any) -> Answer:
            count, tokens = limit(pack_tokens)

            async def make() -> tuple[str, list[MemoryRecord], int]:
                where = Filter(user_id=USER, app_ids=(item.app_id,), min_confidence=0.7)
                found = await view.search(item.description, where, count or 100)
                kept = cut(found, tokens) if tokens is not None else found[:count]
                return render(kept), kept, sum(entry_tokens(r) for r in kept)

            return await timed(make)

        return run

    return {
        "pack": pack,
        "plain_10": plain(lambda _: (10, None)),
        "plain_matched": plain(lambda t: (None, t)),
        "plain_2k": plain(lambda _: (None, PACK_TOKEN_CAP)),
    }


def render(records: list[MemoryRecord]) -> str:
    return "\n\n".join(render_entry(r) for r in records)


async def oracle(
    view: Any, relevant: set[str], by_session: dict[str, list[MemoryRecord]]
) -> Answer:
    memories = [m for s in sorted(relevant) for m in by_session.get(s, [])]
    return Answer(render(memories), memories, sum(entry_tokens(m) for m in memories), 0.0)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    cases: Path = args.cases
    ids = (
        [line.strip() for line in args.related_ids.read_text().splitlines() if line.strip()]
        if args.related_ids
        else None
    )
    paths = sorted((cases / PAST).glob("*.jsonl"))[: args.sessions or None]
    sessions = [s for s in map(load_session, paths) if s is not None]
    tasks = load_tasks(cases / RELATED, ids)
    print(f"{len(sessions)} sessions, {len(tasks)} related tasks", file=sys.stderr, flush=True)
    chosen = [s for s in args.strategies.split(",") if s]
    unknown = set(chosen) - set(STRATEGIES)
    if unknown:
        raise SystemExit(
            f"unknown strategies: {', '.join(sorted(unknown))}; from {', '.join(STRATEGIES)}"
        )

    with tempfile.TemporaryDirectory(prefix="swecb-") as tmp:
        home = scaffold(Path(tmp) / "home").home
        with (home / ".env.executive").open("a") as env_file:
            for key, value in {
                **GO_LIVE,
                "V3_MEM0_USER_ID": USER,
                "EXECUTIVE_STORE": "local",
            }.items():
                env_file.write(f"{key}={value}\n")
        settings = load_settings(home)
        runtime = MemoryRuntime(settings)
        try:
            env = HookEnv(settings, runtime, WorkLedger(home / "ledgers" / "work-ledger.jsonl"))
            started = time.perf_counter()
            await harvest_all(env, sessions, args.harvest)
            view = await runtime.view()
            memories = await view.list(Filter(user_id=USER))
            print(
                f"{len(memories)} memories in {time.perf_counter() - started:.0f}s",
                file=sys.stderr,
                flush=True,
            )
            report = await measure(runtime, view, sessions, tasks, memories, chosen)
        finally:
            await runtime.close()
    report.update(
        {
            "harvest": args.harvest,
            "memories": len(memories),
            "sessions": len(sessions),
            "embedder": settings.embedder,
            "protocol": {
                "cases": str(cases),
                "related_ids": str(args.related_ids) if args.related_ids else "all",
                "gold": "files the patch changes, minus doc/, docs/, test/, tests/, testing/, "
                "CHANGES*, AUTHORS*, README*, *.rst, *.txt, *.md",
                "relevant": "a past session that edited (Edit, MultiEdit, Write) a gold file",
                "tokens": "each entry as the pack counts it (pack.entry_tokens)",
                "plain": "store search of the problem statement in the project's scope, confidence >= 0.7",
            },
        }
    )
    return report


async def measure(
    runtime: MemoryRuntime,
    view: Any,
    sessions: list[Session],
    tasks: list[dict[str, Any]],
    memories: list[MemoryRecord],
    chosen: list[str],
) -> dict[str, Any]:
    run_of = {s.run_id: s.id for s in sessions}
    by_session: dict[str, list[MemoryRecord]] = {}
    for memory in sorted(memories, key=lambda m: (m.run_id or "", m.type, m.id)):
        if memory.run_id in run_of:
            by_session.setdefault(run_of[memory.run_id], []).append(memory)
    runs = strategies(runtime, view)
    rows: dict[str, list[dict[str, float]]] = {s: [] for s in chosen}
    answers: dict[str, list[Answer]] = {s: [] for s in chosen}
    scored, unscored = [], []
    warm = False
    for task in tasks:
        gold = gold_files(task["patch"])
        app = app_of(task["repo"])
        relevant = {s.id for s in sessions if s.app == app and s.edited & set(gold)}
        if not relevant:
            unscored.append(task["instance_id"])
            continue
        scored.append(task["instance_id"])
        slug = f"{task['instance_id'].split('__')[-1].lower()}-next"
        item, step = work_item(app, slug, task["problem_statement"])
        if not warm:  # the first request opens the index: a warm-up, not timed
            await runs["pack"](item, step)
            warm = True
        pack_tokens = 0
        for name in chosen:
            if name == "oracle":
                answer = await oracle(view, relevant, by_session)
            else:
                answer = await runs[name](item, step, pack_tokens=pack_tokens)
            if name == "pack":
                pack_tokens = answer.tokens
            rows[name].append(score(answer, gold, relevant, run_of))
            answers[name].append(answer)
        print(
            f"{task['instance_id']}: {len(relevant)} relevant sessions", file=sys.stderr, flush=True
        )
    return {
        "strategies": {name: summary(rows[name], answers[name]) for name in chosen},
        "tasks_scored": len(scored),
        "tasks_unscored": len(unscored),
        "unscored": unscored,
        "ids": scored,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cases", type=Path, help="the 'cases' folder of a copy of SWEContextBench")
    parser.add_argument(
        "--related-ids", type=Path, help="one related instance id a line (default: all 99)"
    )
    parser.add_argument("--harvest", choices=("experience", "outcome"), default="experience")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument(
        "--sessions", type=int, default=0, help="only the first N sessions (smoke runs)"
    )
    arguments = parser.parse_args()
    if not (arguments.cases / PAST).is_dir():
        raise SystemExit(
            f"{arguments.cases / PAST} is not there. Fetch the public repository "
            "jiayuanz3/SWEContextBench and pass its 'cases' folder, e.g.\n"
            "  git clone https://github.com/jiayuanz3/SWEContextBench /tmp/swecb && "
            "python bench/experience.py /tmp/swecb/cases --related-ids "
            "../shared/data/swecontextbench/dev-related-ids.txt"
        )
    configure_logging(fmt="json", level="warning", stream=sys.stderr)
    print(json.dumps(anyio.run(main, arguments), indent=2))

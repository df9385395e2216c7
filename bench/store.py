"""Benchmark: the embedded store's add and search latency at 1,000 and 10,000 memories.

For each size N, on a fresh store in a temp dir (the real ``LocalStore``: mem0 OSS over
Qdrant local with the MiniLM embedder, no network):

1. fill it to N - 2 * samples memories with ``add_many`` in batches of 256: varied coding-agent
   memories of the five types over 20 app ids, stamped and validated exactly as the harvester
   does, so the stored metadata (type, confidence in the type's range, env "prod", app_id, a
   unique content key, ...) is what production holds;
2. time ``samples`` single adds through ``LocalStore.add`` (``store_add``) and ``samples``
   through ``Harvester.add`` (``harvest_add``: stamp, validate, content-key lookup,
   near-duplicate search, two fsynced ledger lines, store add), alternating, so both see the
   same store size and the store ends at N. A generated memory the harvester skips as a
   near-duplicate of one already stored is not timed (it never reaches the store add); it is
   counted in ``harvest_near_duplicates`` and another is drawn;
3. time ``samples`` searches with full-sentence questions and the reader's kind of filter
   (user_id, agent_id "executive", one or two app ids, env "prod", min_confidence 0.7,
   top_k 10) and, alternating with them, ``samples`` searches filtered on user_id only;
4. close the store, weigh it on disk, and time reopening it.

The store caches question embeddings (an LRU keyed on the exact question text, shared by every
store in the process), so a repeated question would time a cache hit, not an embedding. Every
timed question here is distinct across the whole run (the generator rejects any text it has
produced before), including between the filtered and the unfiltered searches. One untimed
warm-up search per size is made first. ``reopen_seconds`` excludes loading the embedding model,
which the process shares between stores; it is the Qdrant and mem0 start-up at N.

Prints one JSON object on stdout (latencies in ms: p50, p95, mean); progress goes to stderr.

    python bench/store.py [--sizes 1000,10000] [--samples 100] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from executive.logs import configure_logging
from executive.memory.store.base import Filter, NewMemory
from executive.memory.store.local import LocalStore
from executive.memory.write.envelope import Defaults, Payload
from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import HarvestLedger

USER_ID = "agent-bench"
AGENT_ID = "executive"
BATCH = 256
TOP_K = 10
MIN_CONFIDENCE = 0.7

BUNDLES = [
    "greeting",
    "flaky-fetch",
    "invoice-parser",
    "release-notes",
    "docs-site",
    "csv-cleaner",
    "auth-service",
    "image-resizer",
    "search-index",
    "billing-report",
    "chat-widget",
    "log-shipper",
    "feature-flags",
    "mobile-api",
    "data-export",
    "email-digest",
    "ci-pipeline",
    "metrics-dashboard",
]
APP_IDS = [*BUNDLES, "_global", "_executive"]

FILES = [
    "index.html",
    "style.css",
    "pyproject.toml",
    "package.json",
    "src/main.py",
    "src/api/routes.py",
    "tests/test_parser.py",
    "Makefile",
    "Dockerfile",
    "config/settings.yaml",
    "scripts/fetch_mirror.sh",
    "migrations/0003_add_index.sql",
    "README.md",
    "src/lib/cache.ts",
    "webpack.config.js",
    ".github/workflows/ci.yml",
]
COMPONENTS = [
    "fetch step",
    "test runner",
    "build script",
    "database migration",
    "HTTP client",
    "CSV reader",
    "token refresher",
    "image pipeline",
    "search indexer",
    "PDF renderer",
    "cron schedule",
    "package lockfile",
    "static site generator",
    "websocket handler",
    "retry wrapper",
    "log formatter",
]
PHASES = ["plan", "build", "test", "verify", "fetch", "install", "deploy-dry-run", "lint"]
VERIFIERS = ["pytest", "grep", "html-validate", "ruff", "mypy", "npm test", "curl smoke", "diff"]
HOSTS = ["pypi mirror", "npm mirror", "git mirror", "apt mirror", "object store", "docs CDN"]
PACKAGES = ["requests", "pydantic", "numpy", "lxml", "pillow", "react", "vite", "sqlalchemy"]
ERRORS = [
    "ECONNRESET",
    "a 429 from the rate limiter",
    "a segmentation fault in the C extension",
    "a UnicodeDecodeError on a Latin-1 file",
    "a stale lockfile",
    "an OOM kill at 2 GB",
    "a flaky DNS lookup",
    "a missing environment variable",
    "a permission denied on the cache directory",
    "a merge conflict in the generated file",
]
VENDORS = ["claude", "codex", "command", "kimi"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TIMES = ["early morning", "late at night", "right after a deploy", "during the nightly backup"]
TASKS = [
    "regenerate the fixtures",
    "bump a pinned dependency",
    "rebuild the search index",
    "add a database column",
    "refresh the vendored mirror",
    "run the end-to-end tests",
    "rotate the API token",
    "resize the sample images",
    "update the changelog",
    "add a new route",
]
STEPS = [
    "clear the cache directory",
    "pin the version in {file}",
    "run the migrations on a scratch database",
    "regenerate {file}",
    "start the local mirror",
    "export the fixtures as CSV",
    "rerun the linter with --fix",
    "check the diff of {file}",
    "wait {n} seconds for the index to settle",
    "restart the dev server",
]
RULES = [
    "push to a remote",
    "delete files outside the workspace",
    "print a secret into a log",
    "install packages globally",
    "rewrite the git history of a bundle",
    "disable a failing verifier",
    "call a paid API",
    "edit the constitution",
    "change another bundle's files",
    "skip the post-run harvest",
]
CONDITIONS = [
    "the goal says so",
    "a human approved it in the bundle's PROMPT.md",
    "the spec names it explicitly",
    "the run is a dry run",
    "the budget file allows it",
]
REASONS = [
    "a forced push once erased a week of a human's work",
    "secrets in logs end up in the retrospectives",
    "global installs leak between bundles and hide missing pins",
    "a silenced check let a broken build reach the completed folder",
    "paid calls are billed to the operator, not to the bundle",
    "other bundles' workers cannot see what changed under them",
    "a lost harvest means the next run repeats the same mistake",
    "the workspace is the only place a rollback can reach",
    "history rewrites break the work ledger's commit references",
    "the constitution is the one file every worker trusts",
]
ADVICE = [
    "schedule the heavy verifiers for another time",
    "ask the worker to retry with a longer timeout",
    "pin the dependency before the run starts",
    "warm the mirror in the plan phase",
    "split the change into smaller commits",
    "give that vendor a narrower prompt",
    "run the flaky verifier twice before failing the run",
    "write the lesson into the bundle's PROMPT.md",
]


def pick(rng: random.Random, values: list[str]) -> str:
    return rng.choice(values)


def run_id(rng: random.Random, app: str) -> str:
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    slug = app.strip("_") or "executive"
    return f"{day}-{slug}-{rng.randrange(36**6):06x}"


def episodic(rng: random.Random) -> dict[str, Any]:
    app = pick(rng, BUNDLES)
    run = run_id(rng, app)
    outcome = rng.choice(["success", "success", "failure", "partial"])
    said = {
        "success": f"passed all verifiers after {rng.randint(1, 9)} iterations",
        "failure": f"failed in the {pick(rng, PHASES)} phase on {pick(rng, ERRORS)}",
        "partial": (
            f"stopped in the {pick(rng, PHASES)} phase with {rng.randint(1, 5)} of "
            f"{rng.randint(6, 9)} verifiers green"
        ),
    }[outcome]
    detail = rng.choice(
        [
            f"the worker rewrote {pick(rng, FILES)} twice before {pick(rng, VERIFIERS)} passed",
            f"the {pick(rng, HOSTS)} answered with {pick(rng, ERRORS)} on first contact",
            f"pip resolved {pick(rng, PACKAGES)} 2.{rng.randint(0, 30)} instead of the pin",
            f"the {pick(rng, COMPONENTS)} took {rng.randint(20, 900)} seconds",
            f"{rng.randint(2, 40)} tests were skipped because {pick(rng, FILES)} was missing",
        ]
    )
    return {
        "text": f"Run {run} of bundle {app} {said}; {detail}; next, {pick(rng, TASKS)}.",
        "app_id": app,
        "run_id": run,
        "metadata": {
            "type": "episodic",
            "category": "project",
            "importance": rng.choice(["low", "medium", "medium", "high"]),
            "confidence": 1.0,
            "trigger": "post-run",
            "worker_vendor": pick(rng, VENDORS),
            "source": f"workspace/completed/{app}/PROGRESS_LOG.md",
            "outcome": outcome,
            "tags": [app, "POST_RUN"],
        },
    }


def semantic(rng: random.Random) -> dict[str, Any]:
    app = pick(rng, BUNDLES)
    fact = rng.choice(
        [
            f"expects {pick(rng, FILES)} to be UTF-8 without a byte-order mark",
            f"returns HTTP {rng.choice([401, 403, 409, 422, 503])} when the token is older than "
            f"{rng.randint(5, 90)} minutes",
            f"reads its settings from {app.upper().replace('-', '_')}_CONFIG, not {pick(rng, FILES)}",
            f"fails with {pick(rng, ERRORS)} when the {pick(rng, HOSTS)} is cold",
            f"needs {pick(rng, PACKAGES)} below 3.{rng.randint(0, 12)} because of an API change",
            f"writes temporary files next to {pick(rng, FILES)} and never cleans them up",
            f"is only exercised by {pick(rng, VERIFIERS)}, which takes {rng.randint(2, 120)} s",
        ]
    )
    retro = rng.random() < 0.5
    meta: dict[str, Any] = {
        "type": "semantic",
        "category": "technical",
        "importance": rng.choice(["medium", "high", "high", "critical"]),
        "confidence": round(rng.uniform(0.7, 0.95), 2),
        "trigger": "post-retro" if retro else "failure-diagnosis",
        "source": (
            f"learning/retrospectives/retro-2026-{rng.randint(1, 12):02d}-01.md"
            if retro
            else f"workspace/failed/{app}/DIAGNOSIS.md"
        ),
    }
    if not retro:
        meta["worker_vendor"] = pick(rng, VENDORS)
    return {
        "text": (
            f"The {pick(rng, COMPONENTS)} of bundle {app} {fact}; we saw it while trying to "
            f"{pick(rng, TASKS)}."
        ),
        "app_id": app,
        "run_id": run_id(rng, app),
        "metadata": meta,
    }


def procedural(rng: random.Random) -> dict[str, Any]:
    app = pick(rng, BUNDLES)
    first, second = rng.sample(STEPS, 2)
    fill = {"file": pick(rng, FILES), "n": rng.randint(2, 60)}
    return {
        "text": (
            f"To {pick(rng, TASKS)} in bundle {app}: {first.format(**fill)}, then "
            f"{second.format(**fill)}, then verify with {pick(rng, VERIFIERS)} "
            f"(the {pick(rng, HOSTS)} must be reachable)."
        ),
        "app_id": app,
        "run_id": run_id(rng, app),
        "metadata": {
            "type": "procedural",
            "category": "technical",
            "importance": rng.choice(["low", "medium", "high"]),
            "confidence": round(rng.uniform(0.6, 0.9), 2),
            "trigger": "post-run",
            "worker_vendor": pick(rng, VENDORS),
            "source": f"workspace/completed/{app}/PROGRESS_LOG.md",
        },
    }


def reflective(rng: random.Random) -> dict[str, Any]:
    app = rng.choice(["_executive", *BUNDLES])
    about = "the executive's runs" if app == "_executive" else f"runs of bundle {app}"
    pattern = rng.choice(
        [
            f"timeouts cluster on {pick(rng, WEEKDAYS)} {pick(rng, TIMES)}",
            f"{pick(rng, ERRORS)} precedes most failures of the {pick(rng, PHASES)} phase",
            f"the {pick(rng, VENDORS)} worker needs {rng.randint(2, 6)}x more iterations on "
            f"{pick(rng, COMPONENTS)} changes",
            f"retries of the {pick(rng, HOSTS)} fetch succeed after {rng.randint(2, 30)} seconds",
            f"edits to {pick(rng, FILES)} break {pick(rng, VERIFIERS)} about half of the time",
        ]
    )
    pattern += f", so next time {pick(rng, ADVICE)}"
    practice = rng.random() < 0.4
    meta: dict[str, Any] = {
        "type": "reflective",
        "category": "functional",
        "importance": rng.choice(["medium", "high"]),
        "confidence": round(rng.uniform(0.7, 0.95), 2),
        "trigger": "practice-loop" if practice else "failure-diagnosis",
        "source": "ledgers/work-ledger.jsonl",
    }
    if not practice:
        meta["worker_vendor"] = pick(rng, VENDORS)
    if rng.random() < 0.5:
        meta["expires_at"] = f"2027-{rng.randint(1, 12):02d}-01T00:00:00Z"
    return {
        "text": f"Across {rng.randint(3, 40)} {about} since 2026-{rng.randint(1, 12):02d}, {pattern}.",
        "app_id": app,
        "run_id": run_id(rng, app),
        "metadata": meta,
    }


def principle(rng: random.Random) -> dict[str, Any]:
    app = "_global" if rng.random() < 0.3 else pick(rng, BUNDLES)
    rule, condition = pick(rng, RULES), pick(rng, CONDITIONS)
    number = rng.randint(1, 60)
    reason = pick(rng, REASONS)
    text = rng.choice(
        [
            f"Never {rule} unless {condition}, because {reason} (constitution rule {number}).",
            f"A worker must not {rule}; only when {condition} is it allowed: {reason} (rule {number}).",
        ]
    )
    if app != "_global":
        text = f"In bundle {app}: {text[0].lower()}{text[1:]}"
    return {
        "text": text,
        "app_id": app,
        "run_id": f"2026-{rng.randint(1, 12):02d}-01-spec-{app.strip('_')}",
        "metadata": {
            "type": "principle",
            "category": "project",
            "importance": "critical",
            "confidence": 1.0,
            "trigger": "spec-merge",
            "source": "constitution.md" if app == "_global" else f"specs/{app}/SPEC.md",
        },
    }


# A mix like a working agent's: many run records, fewer lessons, a handful of rules.
KINDS: list[tuple[Callable[[random.Random], dict[str, Any]], int]] = [
    (episodic, 38),
    (semantic, 25),
    (procedural, 20),
    (reflective, 12),
    (principle, 5),
]


class Memories:
    """Partial payloads (what a hook hands the harvester), every one a new content key."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seen: set[tuple[str, str, str]] = set()

    def partial(self, *, principles: bool = True) -> dict[str, Any]:
        """A new memory of any kind; without ``principles``, none the harvester refuses (only
        the constitution sync writes a principle)."""
        makers, weights = zip(*KINDS, strict=True)
        while True:
            item = self.rng.choices(makers, weights)[0](self.rng)
            if not principles and item["metadata"]["type"] == "principle":
                continue
            ident = (item["app_id"], item["metadata"]["type"], item["text"].casefold())
            if ident not in self.seen:
                self.seen.add(ident)
                return item


QUESTIONS = [
    "What went wrong the last time bundle {app} fetched from the {host}?",
    "How do I {task} in bundle {app} without breaking {verifier}?",
    "Which settings does the {component} of bundle {app} read when it starts?",
    "Why did bundle {app} fail in the {phase} phase with {error}?",
    "Is there a known fix for {error} in the {component} of {app}?",
    "What should a worker check before editing {file} in bundle {app}?",
    "Which rules apply before I {rule} while working on {app}?",
    "How long does {verifier} usually take on bundle {app}, and does it flake?",
    "Has the {vendor} worker struggled with the {component} of bundle {app} before?",
    "What did we learn about pinning {package} in bundle {app}?",
]


class Questions:
    """Full-sentence questions, none ever repeated in this process (see the module doc)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.asked: set[str] = set()

    def next(self) -> tuple[str, str]:
        rng = self.rng
        while True:
            app = pick(rng, BUNDLES)
            text = pick(rng, QUESTIONS).format(
                app=app,
                host=pick(rng, HOSTS),
                task=pick(rng, TASKS),
                verifier=pick(rng, VERIFIERS),
                component=pick(rng, COMPONENTS),
                phase=pick(rng, PHASES),
                error=pick(rng, ERRORS),
                file=pick(rng, FILES),
                rule=pick(rng, RULES),
                vendor=pick(rng, VENDORS),
                package=pick(rng, PACKAGES),
            )
            if text not in self.asked:
                self.asked.add(text)
                return text, app


def summary(values_s: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values_s]
    cuts = statistics.quantiles(ms, n=100, method="inclusive")
    return {
        "p50": round(cuts[49], 1),
        "p95": round(cuts[94], 1),
        "mean": round(statistics.fmean(ms), 1),
    }


def disk_mb(path: Path) -> float:
    # Blocks, not sizes: Qdrant Edge preallocates sparse WAL and mmap files.
    total = sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())
    return round(total / 2**20, 1)


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def progress(message: str) -> None:
    print(f"[bench/store] {message}", file=sys.stderr, flush=True)


def new_memory(payload: Payload) -> NewMemory:
    scope = {"user_id": payload.user_id, "agent_id": payload.agent_id, "run_id": payload.run_id}
    return NewMemory(payload.text, scope, payload.flat_metadata())


async def run_size(
    size: int, samples: int, root: Path, mem0_dir: Path, seed: int, questions: Questions
) -> dict[str, Any]:
    data_dir = root / "store"
    rng = random.Random(seed)
    memories = Memories(rng)
    started = time.perf_counter()
    store = await LocalStore.open(data_dir, mem0_dir)
    progress(f"N={size}: store opened in {time.perf_counter() - started:.1f}s at {data_dir}")
    defaults = Defaults(user_id=USER_ID, env="prod")
    harvester = Harvester(store, HarvestLedger(root / "ledgers" / "harvest-runs"), defaults)
    try:
        # 1. Fill, batched; stamping and validation are untimed, only add_many counts.
        target = size - 2 * samples
        filled, fill_seconds = 0, 0.0
        while filled < target:
            count = min(BATCH, target - filled)
            batch = [
                new_memory(p)
                for p in harvester.prepare(
                    [memories.partial() for _ in range(count)], principles=True
                )
            ]
            t0 = time.perf_counter()
            receipts = await store.add_many(batch)
            fill_seconds += time.perf_counter() - t0
            if not all(r.confirmed for r in receipts):
                raise SystemExit(f"add_many did not confirm every write at {filled}")
            filled += count
            if filled % (BATCH * 8) < BATCH or filled == target:
                progress(f"N={size}: filled {filled}/{target} ({filled / fill_seconds:.0f}/s)")

        # 2. Single adds, store and harvester alternating.
        store_add: list[float] = []
        harvest_add: list[float] = []
        duplicates = 0
        for _ in range(samples):
            [payload] = harvester.prepare([memories.partial(principles=False)])
            item = new_memory(payload)
            t0 = time.perf_counter()
            receipt = await store.add(item)
            store_add.append(time.perf_counter() - t0)
            if not receipt.confirmed:
                raise SystemExit(f"store add not confirmed: {receipt}")

            # A near-duplicate (cosine >= 0.95 to a memory of the same app and type) is
            # skipped by the harvester, not written: untimed, counted, drawn again.
            while True:
                t0 = time.perf_counter()
                result = await harvester.add([memories.partial(principles=False)])
                elapsed = time.perf_counter() - t0
                if not result.ok:
                    raise SystemExit(f"harvester add failed: {result.as_dict()}")
                if result.succeeded:
                    harvest_add.append(elapsed)
                    break
                duplicates += 1
                if duplicates > 5 * samples:
                    raise SystemExit("the generator keeps producing near-duplicates")
        progress(
            f"N={size}: single adds done (store p50 {summary(store_add)['p50']} ms, "
            f"harvest p50 {summary(harvest_add)['p50']} ms, {duplicates} near-duplicates)"
        )

        # 3. Searches: the reader's filter, and user_id only; alternating, all questions new.
        warm, _ = questions.next()
        await store.search(warm, Filter(user_id=USER_ID), TOP_K)
        filtered: list[float] = []
        unfiltered: list[float] = []
        hits = [0, 0]
        for _ in range(samples):
            text, app = questions.next()
            apps = (app,) if rng.random() < 0.5 else (app, "_global")
            where = Filter(
                user_id=USER_ID,
                agent_id=AGENT_ID,
                app_ids=apps,
                env="prod",
                min_confidence=MIN_CONFIDENCE,
            )
            t0 = time.perf_counter()
            found = await store.search(text, where, TOP_K)
            filtered.append(time.perf_counter() - t0)
            hits[0] += len(found)

            text, _ = questions.next()
            t0 = time.perf_counter()
            found = await store.search(text, Filter(user_id=USER_ID), TOP_K)
            unfiltered.append(time.perf_counter() - t0)
            hits[1] += len(found)
        progress(
            f"N={size}: searches done (filtered p50 {summary(filtered)['p50']} ms, "
            f"{hits[0] / samples:.1f} hits; unfiltered p50 {summary(unfiltered)['p50']} ms, "
            f"{hits[1] / samples:.1f} hits)"
        )
    finally:
        await store.close()

    # 4. On disk, then reopen at N.
    disk = disk_mb(data_dir)
    t0 = time.perf_counter()
    reopened = await LocalStore.open(data_dir, mem0_dir)
    reopen_seconds = time.perf_counter() - t0
    try:
        held = await reopened.count()
    finally:
        await reopened.close()
    progress(f"N={size}: {held} memories, {disk} MB on disk, reopened in {reopen_seconds:.2f}s")
    if held != size:
        raise SystemExit(f"expected {size} memories, the store holds {held}")

    return {
        "store_add_ms": summary(store_add),
        "harvest_add_ms": summary(harvest_add),
        "search_ms": summary(filtered),
        "search_unfiltered_ms": summary(unfiltered),
        "fill_per_second": round(filled / fill_seconds, 1),
        "reopen_seconds": round(reopen_seconds, 2),
        "disk_mb": disk,
        "memories": held,
        "harvest_near_duplicates": duplicates,
    }


async def run(sizes: list[int], samples: int, work: Path, seed: int) -> dict[str, Any]:
    questions = Questions(random.Random(seed ^ 0x5EED))
    results: dict[str, Any] = {}
    for size in sizes:
        root = work / f"n{size}"
        if root.exists():
            raise SystemExit(f"{root} exists; --keep wants an empty directory")
        results[str(size)] = await run_size(
            size, samples, root, work / "mem0", seed + size, questions
        )
    return {
        "benchmark": "embedded-store",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "samples": samples,
        "sizes": results,
        "peak_rss_mb": peak_rss_mb(),
    }


def claim_stdout() -> TextIO:
    """The real stdout for the JSON; anything else printing to fd 1 lands on stderr."""
    sys.stdout.flush()
    real = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return real


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes")
    parser.add_argument("--samples", type=int, default=100, help="timed calls per measurement")
    parser.add_argument("--keep", type=Path, help="build the stores here and keep them")
    parser.add_argument("--seed", type=int, default=7, help="seed for the generated texts")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.samples < 2:
        parser.error("--samples must be at least 2")
    if any(size <= 2 * args.samples for size in sizes):
        parser.error("every size must exceed 2 * samples (the timed adds fill the last part)")

    out = claim_stdout()
    configure_logging(fmt="json", level="warning", stream=sys.stderr)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        report = asyncio.run(run(sizes, args.samples, args.keep.resolve(), args.seed))
    else:
        with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
            report = asyncio.run(run(sizes, args.samples, Path(tmp), args.seed))
    out.write(json.dumps(report, indent=2) + "\n")
    out.flush()


if __name__ == "__main__":
    main()

"""Benchmark: evidence recall of the reader against plain and keyword search, on LoCoMo.

    python bench/retrieval.py PATH [--conversations conv-26,conv-30] [--overhead 20] [--embedder minilm-fp32]

PATH is a LoCoMo-format file (the development split is ``../shared/data/locomo/locomo-dev.json``).
Every turn of a conversation becomes one memory ("<speaker>: <text>", the session date in
the memory's metadata and run id) in a fresh embedded store, written the way the store
writes (mem0, ``infer=False``). Every question of categories 1 to 4 is a retrieval request,
answered by three strategies side by side:

* ``plain``: one store search with the question (what mem0 alone gives);
* ``keywords``: the same search with the question as a keyword bag (stop words removed);
* ``reader``: the product's reader (``executive.memory.read.reader``), asked the question and
  told to keep asking until corroborated memories fill the budget (a mode no hook uses);
* ``pack``: what a worker gets. Hook B's exact code path
  (``executive.hooks.builtin.pre_spawn.build``): ``plan.for_step`` with the question as the
  step, the reader with the production stop rules, ``PACK_MIN_SCORE``, then
  ``pack.render`` (the relevant memories, best first, while they fit in 2,000 tokens counted
  the way the pack counts them). Its recall within the budget is over the pack's entries,
  within 10 over its first ten in rank order.

Each returns memories best first. ``recall_budget`` walks that list, charging every entry
its text (4 characters a token) plus ``--overhead`` tokens for its heading and id line, and
stops before the entry that would pass 2,000 tokens; recall is the share of the question's
evidence turns among the entries kept. ``recall_at_10`` is the same over the first ten.
Latency is the wall time of one whole request (every hop), after one warm-up request per
store. Nothing a strategy sees carries the evidence labels: turn ids live in a side table
the scorer alone reads. Prints one JSON object on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"

import anyio

from executive.hooks.builtin import pre_spawn
from executive.logs import configure_logging
from executive.memory.read import plan
from executive.memory.read.reader import Reader
from executive.memory.read.words import words
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, ReadView
from executive.memory.store.embedder import DEFAULT_EMBEDDER, EMBEDDERS
from executive.memory.store.local import LocalStore

BUDGET = 2000
CATEGORIES = {1: "1", 2: "2", 3: "3", 4: "4"}  # multi-hop, temporal, open-domain, single-hop
NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
USER = "locomo-bench"
POOL = 100  # enough hits to fill the budget (~40 entries of ~50 tokens)
Strategy = Callable[[str, str], Awaitable[list[MemoryRecord]]]
PACKS: list[tuple[int, int]] = []  # (entries, tokens) of every pack built


def session_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")  # "1:56 pm on 8 May, 2023"


def evidence_ids(raw: list[Any]) -> list[str]:
    """``"D8:6; D9:17"`` → two ids; ``"D:11:26"`` → ``D11:26``."""
    return [
        f"D{int(a)}:{int(b)}" for item in raw for a, b in re.findall(r"D:?(\d+):(\d+)", str(item))
    ]


def load(path: Path, only: set[str] | None) -> list[dict[str, Any]]:
    conversations = []
    for sample in json.loads(path.read_text()):
        if only and sample["sample_id"] not in only:
            continue
        talk = sample["conversation"]
        sessions = sorted(
            int(k.split("_")[1]) for k in talk if re.fullmatch(r"session_\d+", k) and talk[k]
        )
        turns = []
        for number in sessions:
            day = session_date(talk[f"session_{number}_date_time"]).date().isoformat()
            for turn in talk[f"session_{number}"]:
                turns.append(
                    {
                        "dia": turn["dia_id"],
                        "text": f"{turn['speaker']}: {turn['text'].strip()}",
                        "day": day,
                    }
                )
        known = {t["dia"] for t in turns}
        questions = []
        for qa in sample["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            evidence = sorted({e for e in evidence_ids(qa.get("evidence", [])) if e in known})
            if evidence:
                questions.append(
                    {
                        "q": qa["question"],
                        "evidence": evidence,
                        "category": CATEGORIES[qa["category"]],
                    }
                )
        conversations.append({"id": sample["sample_id"], "turns": turns, "questions": questions})
    return conversations


def slug(conversation: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", conversation.lower()).strip("-")


async def fill(store: LocalStore, conversation: dict[str, Any]) -> dict[str, str]:
    """Write the turns; returns memory id → dia id (the scorer's side table)."""
    app = slug(conversation["id"])
    items, dias = [], []
    for order, turn in enumerate(conversation["turns"]):
        key = hashlib.sha256(f"{app}:{order}".encode()).hexdigest()[:32]
        items.append(
            NewMemory(
                turn["text"],
                {"user_id": USER, "agent_id": "executive", "run_id": f"{turn['day']}-{app}"},
                {
                    "type": "episodic",
                    "confidence": 1.0,
                    "env": "prod",
                    "app_id": app,
                    "key": key,
                    "session_date": turn["day"],
                    "source": "locomo",
                },
                f"{turn['day']}T00:00:00+00:00",
                # A fixed id per turn: the turns of a session share their time, so ties in
                # listing and ranking fall to the id, and a random one made every run differ.
                memory_id=str(uuid.UUID(key)),
            )
        )
        dias.append(turn["dia"])
    side: dict[str, str] = {}
    for start in range(0, len(items), 256):
        receipts = await store.add_many(items[start : start + 256])
        for receipt, dia in zip(receipts, dias[start : start + 256], strict=True):
            side[str(receipt.memory_id)] = dia
    return side


def strategies(store: LocalStore, overhead: int) -> dict[str, Strategy]:
    view = ReadView(store)

    def scope(app: str) -> Filter:
        return Filter(user_id=USER, app_ids=(app,))

    async def plain(question: str, app: str) -> list[MemoryRecord]:
        return await store.search(question, scope(app), POOL)

    async def keywords(question: str, app: str) -> list[MemoryRecord]:
        bag = " ".join(surface for surface, _ in words(question)) or question
        return await store.search(bag, scope(app), POOL)

    async def reader(question: str, app: str) -> list[MemoryRecord]:
        # The reader fills the budget by this benchmark's own yardstick (``charge``).
        request = plan.for_question(
            question, app_id=app, fill_tokens=BUDGET, entry_cost=lambda r: charge(r, overhead)
        )
        return (await Reader(view, user_id=USER).read(request)).memories

    async def pack(question: str, app: str) -> list[MemoryRecord]:
        request = plan.for_step(
            title=question,
            slug=app,
            app_id=app,
            step_number=1,
            step_title=question,
            vendor="claude",
        )
        built, _ = await pre_spawn.build(Reader(view, user_id=USER), request)
        PACKS.append((len(built.entries), built.tokens))
        return built.entries

    return {"plain": plain, "keywords": keywords, "reader": reader, "pack": pack}


def charge(record: MemoryRecord, overhead: int) -> int:
    """The yardstick every strategy is measured by: 4 characters a token, plus ``overhead``
    for an entry's heading and id line (the pack's own count is used by the pack row only)."""
    return math.ceil(len(record.text) / 4) + overhead


def recall(
    found: list[MemoryRecord], side: dict[str, str], evidence: list[str], overhead: int
) -> tuple[float, float]:
    wanted, used, kept = set(evidence), 0, []
    for record in found:
        cost = charge(record, overhead)
        if used + cost > BUDGET:
            break
        used += cost
        kept.append(record)
    in_budget = {side.get(r.id) for r in kept} & wanted
    in_ten = {side.get(r.id) for r in found[:10]} & wanted
    return len(in_budget) / len(wanted), len(in_ten) / len(wanted)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] if ordered else 0.0


async def main(path: Path, only: set[str] | None, overhead: int, embedder: str) -> None:
    conversations = load(path, only)
    rows: dict[str, dict[str, list[tuple[float, float, float, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    with tempfile.TemporaryDirectory() as tmp:
        for conversation in conversations:
            root = Path(tmp) / slug(conversation["id"])
            store = await LocalStore.open(root / "store", root / "mem0", embedder=embedder)
            try:
                started = time.perf_counter()
                side = await fill(store, conversation)
                print(
                    f"{conversation['id']}: {len(side)} memories in {time.perf_counter() - started:.1f}s, "
                    f"{len(conversation['questions'])} questions",
                    file=sys.stderr,
                    flush=True,
                )
                app = slug(conversation["id"])
                for name, strategy in strategies(store, overhead).items():
                    await strategy(conversation["questions"][0]["q"], app)  # warm-up, not timed
                    for item in conversation["questions"]:
                        t0 = time.perf_counter()
                        found = await strategy(item["q"], app)
                        ms = (time.perf_counter() - t0) * 1000
                        if name == "pack":  # its entries already fit in 2,000 tokens
                            wanted = set(item["evidence"])
                            hit = {side.get(r.id) for r in found} & wanted
                            first = {side.get(r.id) for r in found[:10]} & wanted
                            in_budget = no_overhead = len(hit) / len(wanted)
                            in_ten = len(first) / len(wanted)
                        else:
                            in_budget, in_ten = recall(found, side, item["evidence"], overhead)
                            no_overhead, _ = recall(found, side, item["evidence"], 0)
                        rows[name][item["category"]].append((in_budget, in_ten, ms, no_overhead))
            finally:
                await store.close()
    report: dict[str, Any] = {"strategies": {}, "extra": {}}
    for name, by_category in rows.items():
        report["strategies"][name] = {}
        report["extra"][name] = {}
        for category in sorted(by_category):
            values = by_category[category]
            times = [v[2] for v in values]
            report["strategies"][name][category] = {
                "n": len(values),
                "recall_budget": round(statistics.mean(v[0] for v in values), 3),
                "recall_at_10": round(statistics.mean(v[1] for v in values), 3),
                "p50_ms": round(percentile(times, 50), 1),
                "p95_ms": round(percentile(times, 95), 1),
            }
            report["extra"][name][category] = {
                "category": NAMES[category],
                "recall_budget_no_overhead": round(statistics.mean(v[3] for v in values), 3),
            }
    if PACKS:
        report["extra"]["pack"]["entries_mean"] = round(statistics.mean(e for e, _ in PACKS), 2)
        report["extra"]["pack"]["tokens_p95"] = percentile([float(t) for _, t in PACKS], 95)
    report["protocol"] = {
        "file": str(path),
        "budget_tokens": BUDGET,
        "entry_tokens": f"ceil(len(text) / 4) + {overhead}",
        "conversations": [c["id"] for c in conversations],
        "memory_text": "<speaker>: <turn text>",
        "embedder": embedder,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--conversations", help="comma-separated sample ids (default: all)")
    parser.add_argument(
        "--overhead", type=int, default=20, help="tokens charged per entry besides its text"
    )
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, choices=sorted(EMBEDDERS))
    args = parser.parse_args()
    selected = set(args.conversations.split(",")) if args.conversations else None
    # stdout carries the one JSON report; log lines go to stderr.
    configure_logging(fmt="json", level="warning", stream=sys.stderr)
    anyio.run(main, args.path, selected, args.overhead, args.embedder)

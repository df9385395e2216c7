"""``/metrics``: the observer's counters and the store's gauges, in Prometheus' text format.

A collector on a registry of our own (not the library's global one) reads the observer at
scrape time, so nothing in the loop imports prometheus_client and no metric object outlives
the daemon. Store figures are gathered asynchronously before the (synchronous) exposition.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import Collector

from executive import __version__
from executive.observe import DURATION_BUCKETS, Observer
from executive.spend import DIRECTIONS

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class StoreFigures:
    """What the store and the harvest ledger said at this scrape (None: not known)."""

    pending_writes: int | None = None
    by_type: dict[str, int] = field(default_factory=dict)
    queue: dict[str, int] = field(default_factory=dict)  # bundles by state, from the folders
    spend: dict[str, Any] | None = None  # the work ledger's spend summary (status's "spend")
    store_up: bool | None = None  # the store answered this scrape's count (None: not asked)
    store_missing: int | None = None  # memories the ledgers confirm and the store lacks


def _bound(value: float) -> str:
    return "+Inf" if value == float("inf") else repr(value)


class _Collector(Collector):
    def __init__(self, observer: Observer, figures: StoreFigures) -> None:
        self._o = observer
        self._f = figures

    def collect(self) -> Iterator[Metric]:
        o = self._o
        iterations = CounterMetricFamily(
            "executive_iterations", "Loop iterations by how they ended", labels=["pace"]
        )
        for pace, n in sorted(o.iteration_counts.items()):
            iterations.add_metric([pace], n)
        yield iterations

        runs = CounterMetricFamily(
            "executive_hook_runs", "Hook runs by hook and outcome", labels=["hook", "outcome"]
        )
        for (hook, outcome), n in sorted(o.hook_counts.items()):
            runs.add_metric([hook, outcome], n)
        yield runs

        durations = HistogramMetricFamily(
            "executive_hook_duration_seconds", "How long hook runs took", labels=["hook"]
        )
        for hook, hist in sorted(o.hook_durations.items()):
            buckets = [(_bound(b), n) for b, n in zip(DURATION_BUCKETS, hist.buckets, strict=True)]
            durations.add_metric([hook], buckets, hist.total)
        yield durations

        yield from self._memory()

        if self._f.pending_writes is not None:
            yield GaugeMetricFamily(
                "executive_pending_writes",
                "Writes the store never confirmed (replayed from the ledger)",
                value=self._f.pending_writes,
            )
        if self._f.store_up is not None:
            yield GaugeMetricFamily(
                "executive_store_up",
                "1 when the memory store answered this scrape, 0 when it did not",
                value=int(self._f.store_up),
            )
        if self._f.store_missing is not None:
            yield GaugeMetricFamily(
                "executive_store_memories_missing",
                "Memories the harvest ledgers confirm that the store does not hold"
                " (fix: executive mem rebuild)",
                value=self._f.store_missing,
            )
        memories = GaugeMetricFamily(
            "executive_memories", "Memories in the store by type", labels=["type"]
        )
        for kind, n in sorted(self._f.by_type.items()):
            memories.add_metric([kind], n)
        yield memories
        yield GaugeMetricFamily(
            "executive_uptime_seconds", "Seconds since the daemon started", value=o.uptime_seconds
        )
        yield from self._health()
        if self._f.spend is not None:
            yield from _spend(self._f.spend)

    def _memory(self) -> Iterator[Metric]:
        """What the hooks did with memory: pack sizes, writes, and the workers' runs."""
        o = self._o
        tokens = SummaryMetricFamily("executive_pack_tokens", "Tokens of each memory pack built")
        tokens.add_metric([], o.pack_tokens.count, o.pack_tokens.total)
        yield tokens
        entries = SummaryMetricFamily("executive_pack_entries", "Memories in each pack built")
        entries.add_metric([], o.pack_entries.count, o.pack_entries.total)
        yield entries

        writes = CounterMetricFamily(
            "executive_store_writes",
            "Memory writes by hooks: succeeded, skipped (already known) or failed",
            labels=["result"],
        )
        for result in ("succeeded", "skipped", "failed"):
            writes.add_metric([result], o.write_counts.get(result, 0))
        yield writes

        workers = CounterMetricFamily(
            "executive_worker_runs", "Worker runs by outcome", labels=["outcome"]
        )
        # Every outcome from the start, at 0: a rate over "no runs yet" must be 0, not absent.
        for outcome in sorted({"passed", "failed", "fatal", *o.worker_counts}):
            workers.add_metric([outcome], o.worker_counts.get(outcome, 0))
        yield workers

    def _health(self) -> Iterator[Metric]:
        """What an alert needs: the queue, blocked bundles, failing iterations, the build."""
        bundles = GaugeMetricFamily(
            "executive_bundles",
            "Bundles by state: ondeck, in_progress, blocked, completed",
            labels=["state"],
        )
        for state, n in sorted(self._f.queue.items()):
            bundles.add_metric([state], n)
        yield bundles
        yield GaugeMetricFamily(
            "executive_failed_iterations_in_a_row",
            "Loop iterations that raised, in a row (0 after a good one)",
            value=self._o.failed_in_a_row,
        )
        ticked = self._o.last_tick
        yield GaugeMetricFamily(
            "executive_seconds_since_last_iteration",
            "Seconds since an iteration last started or finished",
            value=time.monotonic() - ticked if ticked is not None else self._o.uptime_seconds,
        )
        yield GaugeMetricFamily(
            "executive_seconds_without_progress",
            "Seconds the loop made no progress: no iteration started or finished, and no"
            " heartbeat found it awaiting a worker within that worker's time limit",
            value=self._o.seconds_without_progress(),
        )
        info = GaugeMetricFamily(
            "executive_build_info", "The running version (always 1)", labels=["version", "python"]
        )
        info.add_metric([__version__, platform.python_version()], 1)
        yield info


def _spend(spend: dict[str, Any]) -> Iterator[Metric]:
    """What paid runs cost, from the work ledger (so a restart keeps the counts)."""
    usd = CounterMetricFamily(
        "executive_spend_usd",
        "US dollars paid runs reported, by kind (worker, hook), since the ledger began",
        labels=["kind"],
    )
    tokens = CounterMetricFamily(
        "executive_tokens",
        "Tokens paid runs reported, by kind and direction (input, output, cache_read, cache_write)",
        labels=["kind", "direction"],
    )
    for kind, tally in sorted(spend["kinds"].items()):
        usd.add_metric([kind], tally["cost_usd"])
        for direction in DIRECTIONS:
            tokens.add_metric([kind, direction], tally[f"{direction}_tokens"])
    yield usd
    yield tokens
    yield GaugeMetricFamily(
        "executive_spend_today_usd",
        "US dollars spent today (midnight to midnight in EXECUTIVE_TIMEZONE)",
        value=spend["today"]["cost_usd"],
    )
    yield GaugeMetricFamily(
        "executive_budget_day_usd",
        "EXECUTIVE_BUDGET_DAY_USD, the daily cap in US dollars (0: no cap)",
        value=spend["caps"].get("day_usd") or 0,
    )
    yield GaugeMetricFamily(
        "executive_budget_paused",
        "1 while the daily budget is spent and paid runs wait for the next day",
        value=1 if spend.get("paused") else 0,
    )


def exposition(observer: Observer, figures: StoreFigures) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(observer, figures))
    # The daemon's own process: CPU, resident memory, open file descriptors, start time.
    ProcessCollector(registry=registry)
    return generate_latest(registry)

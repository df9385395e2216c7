"""The harvest summary a write hook answers with."""

from __future__ import annotations

from collections.abc import Sequence

from executive.memory.write.harvester import HarvestSummary


def harvest_summary(
    trigger: str, source: str, summaries: Sequence[HarvestSummary], notes: Sequence[str] = ()
) -> str:
    done = HarvestSummary([r for s in summaries for r in s.results])
    results = done.results
    lines = [
        "## Harvest summary",
        f"Trigger: {trigger} · Source: {source} · Written: {done.succeeded} of {len(results)}",
    ]
    for r in results:
        ident = (r.memory_id or "-").replace("-", "")[:8]
        lines.append(f"- {ident} · {r.type} · {r.status}" + (f" · {r.error}" if r.error else ""))
    lines += [f"- {note}" for note in notes]
    if not results and not notes:
        lines.append("- nothing worth remembering")
    if done.failed:
        lines.append(f"Failures: {done.failed} of {len(results)} writes were not confirmed.")
    return "\n".join(lines) + "\n"

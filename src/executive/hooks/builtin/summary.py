"""What the built-in write hooks share: a memory's payload, and the summary they answer with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from executive.corpus.distill import unstamped
from executive.hooks.context import FailDiagContext, PostRunContext
from executive.memory.taxonomy import WorkerVendor
from executive.memory.write import MAX_TEXT_CHARS, HarvestSummary
from executive.untrusted import clip

_VENDORS = {v.value for v in WorkerVendor}


def payload(
    ctx: PostRunContext | FailDiagContext, text: str, *, trigger: str, source: str, **meta: Any
) -> dict[str, Any]:
    """A memory of the step's run: by its worker's vendor when that is a known one (else by
    the executive), cut to fit, with no metadata left ``None``."""
    vendor = ctx.vendor if ctx.vendor in _VENDORS else None
    return unstamped(
        clip(text, MAX_TEXT_CHARS),  # long paths and a long account: the memory still fits
        ctx.work_item.app_id,
        ctx.harvest_run,
        trigger=trigger,
        source=source,
        **({"worker_vendor": vendor} if vendor else {"actor": "executive"}),
        **{k: v for k, v in meta.items() if v is not None},
    )


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

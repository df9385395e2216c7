"""Valid payloads of every type, for tests to start from and spoil."""

from __future__ import annotations

import copy
from typing import Any

from executive.memory.write.envelope import Defaults, stamp
from executive.memory.write.principles import TrustedRules

DEFAULTS = Defaults(user_id="agent-test", env="prod")

_BASE: dict[str, dict[str, Any]] = {
    "episodic": {
        "text": "On 2026-12-01 run 2026-12-01-greeting-abc123 of bundle greeting passed all verifiers.",
        "app_id": "greeting",
        "run_id": "2026-12-01-greeting-abc123",
        "metadata": {
            "type": "episodic",
            "category": "project",
            "importance": "medium",
            "confidence": 1.0,
            "trigger": "post-run",
            "worker_vendor": "command",
            "source": "workspace/completed/greeting/PROMPT.md",
            "outcome": "success",
            "tags": ["greeting", "POST_RUN"],
        },
    },
    "principle": {
        "text": "Never push to a remote unless the goal says so (constitution rule 1).",
        "app_id": "_global",
        "run_id": "2026-12-01-spec-constitution",
        "metadata": {
            "type": "principle",
            "category": "project",
            "importance": "critical",
            "confidence": 1.0,
            "trigger": "spec-merge",
            "source": "constitution.md",
        },
    },
    "semantic": {
        "text": "The fetch mirror for bundle flaky-fetch resets connections (ECONNRESET) on first contact.",
        "app_id": "flaky-fetch",
        "run_id": "2026-12-01-retro-weekly",
        "metadata": {
            "type": "semantic",
            "category": "technical",
            "importance": "high",
            "confidence": 0.85,
            "trigger": "post-retro",
            "source": "learning/retrospectives/retro-2026-12-01.md",
        },
    },
    "procedural": {
        "text": "To build the greeting page: write index.html first, then style.css, then verify with grep.",
        "app_id": "greeting",
        "run_id": "2026-12-01-greeting-abc123",
        "metadata": {
            "type": "procedural",
            "category": "technical",
            "importance": "medium",
            "confidence": 0.7,
            "trigger": "post-run",
            "worker_vendor": "claude",
            "source": "workspace/completed/greeting/PROGRESS_LOG.md",
        },
    },
    "reflective": {
        "text": "Across runs 2026-11-01-a and 2026-11-08-b, timeouts cluster on Monday mornings.",
        "app_id": "_executive",
        "run_id": "2026-12-01-fail-greeting-3",
        "metadata": {
            "type": "reflective",
            "category": "functional",
            "importance": "high",
            "confidence": 0.8,
            "trigger": "failure-diagnosis",
            "worker_vendor": "command",
            "source": "ledgers/work-ledger.jsonl",
            "expires_at": "2027-03-01T00:00:00Z",
        },
    },
}


def partial(kind: str = "episodic", **changes: Any) -> dict[str, Any]:
    payload = copy.deepcopy(_BASE[kind])
    meta_changes = changes.pop("metadata", {})
    payload.update(changes)
    payload["metadata"].update(meta_changes)
    return payload


def stamped(
    kind: str = "episodic", defaults: Defaults = DEFAULTS, **changes: Any
) -> dict[str, Any]:
    return stamp(partial(kind, **changes), defaults)


# What the constitution sync would write now: the one rule a test's constitution.md holds.
TRUSTED = TrustedRules.of([_BASE["principle"]], ["constitution.md"])

"""A memory-on home, a real runtime, and captured log lines.

The runtime's store is the in-memory one (``EXECUTIVE_STORE=inmemory``): these tests are about
the hooks, not the store. A test about what the embedded store finds asks for it with
``settings_for(..., EXECUTIVE_STORE="local")`` and the ``store`` mark.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import structlog

from executive.hooks import skills
from executive.hooks.context import (
    FailDiagContext,
    FailureSignals,
    HookContext,
    PostRetroContext,
    PostRunContext,
    PreSpawnContext,
    PreWorkContext,
    Step,
    ValidationReport,
    VerifierReport,
    WorkItem,
)
from executive.hooks.runner import HookEnv
from executive.hookspecs import HookName
from executive.logs import configure_logging
from executive.memory.runtime import MemoryRuntime
from executive.settings import Settings, load_settings
from executive.workspace.ledger import WorkLedger
from tests.conftest import scaffolded, set_env

ALL_ON = {
    "V3_MEMORY_ENABLED": "true",
    "V3_MEM_HOOK_PRE_WORK": "true",
    "V3_MEM_HOOK_PRE_SPAWN": "true",
    "V3_MEM_HOOK_POST_RUN": "true",
    "V3_MEM_HOOK_FAIL_DIAG": "true",
    "V3_MEM_HOOK_POST_RETRO": "true",
    "V3_MEM0_USER_ID": "agent-hooks",
    "EXECUTIVE_STORE": "inmemory",
}


def description(skill: str) -> str:
    """A skill file's ``description:`` line (its frontmatter), "" when it has none."""
    found = re.search(r"^description: (.+)$", skills.raw(skill), re.MULTILINE)
    return found.group(1).strip() if found else ""


def settings_for(home: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    """Write the values into the home's .env.executive, so other processes see them too."""
    set_env(home, **{**ALL_ON, **env})
    return load_settings(home)


@pytest.fixture
def agent_home(tmp_path: Path) -> Path:
    return scaffolded(tmp_path / "home")


@pytest.fixture
def settings(agent_home: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return settings_for(agent_home, monkeypatch)


@pytest.fixture
async def runtime(settings: Settings) -> AsyncIterator[MemoryRuntime]:
    memory = MemoryRuntime(settings)
    yield memory
    await memory.close()


@pytest.fixture
def env(settings: Settings, runtime: MemoryRuntime) -> HookEnv:
    return HookEnv(settings, runtime, WorkLedger(settings.home / "ledgers" / "work-ledger.jsonl"))


@pytest.fixture
def logs() -> Iterator[Callable[[], list[dict]]]:
    buffer = io.StringIO()
    configure_logging(fmt="json", level="info", stream=buffer)
    yield lambda: [
        json.loads(line) for line in buffer.getvalue().splitlines() if line.startswith("{")
    ]
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()


ITEM = WorkItem(
    id="greeting-page",
    title="Build the greeting page",
    description="Write index.html with a heading, then a stylesheet it links to.",
    priority="P1",
    bundle_slug="greeting-page",
    app_id="greeting-page",
    output_path="/tmp/out/greeting-page",
    source="workspace/in-progress/P1/greeting-page/PROMPT.md",
)
STEP = Step(number=1, title="Write the page", estimated_seconds=10)


def pre_spawn(**changes) -> PreSpawnContext:
    return PreSpawnContext(work_item=ITEM, current_step=STEP, vendor="command", **changes)


def post_run(**changes) -> PostRunContext:
    values = dict(
        work_item=ITEM,
        current_step=STEP,
        vendor="command",
        validation_report=ValidationReport(
            passed=True,
            verifiers=[
                VerifierReport(
                    verifier="output_exists:index.html", result="PASS", message="present"
                )
            ],
        ),
        harvest_run="2026-12-02-greeting-page-abc123",
        duration_seconds=4.0,
        run_ended_at="2026-12-02T10:00:00+00:00",
    )
    values.update(changes)
    return PostRunContext(**values)


def fail_diag(
    attempts: int,
    prior: list[tuple[str, str]],
    error: str = "error: ECONNRESET while fetching mirror 10.0.0.7",
) -> FailDiagContext:
    from executive.hooks.context import PriorAttempt

    return FailDiagContext(
        work_item=ITEM,
        current_step=STEP,
        vendor="command",
        failure_signals=FailureSignals(attempts=attempts, last_error=error),
        prior_attempts=[
            PriorAttempt(run_id=r, attempt=i + 1, error=e) for i, (r, e) in enumerate(prior)
        ],
        harvest_run=f"2026-12-02-fail-greeting-page-{attempts}",
    )


# One context of each hook, for tests that run every hook.
SAMPLE_CONTEXTS: dict[HookName, Callable[[], HookContext]] = {
    HookName.PRE_WORK: lambda: PreWorkContext(
        queued=[pre_spawn().work_item], picked="greeting-page"
    ),
    HookName.PRE_SPAWN: pre_spawn,
    HookName.POST_RUN: post_run,
    HookName.FAIL_DIAG: lambda: fail_diag(3, [("r1", "boom"), ("r2", "boom")]),
    HookName.POST_RETRO: lambda: PostRetroContext(
        retro_path="learning/retrospectives/none.md", harvest_run="2026-12-02-retro-weekly"
    ),
}

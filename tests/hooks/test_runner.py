"""Gating, errors as values, logging and the ledger event of run_memory_hook."""

from __future__ import annotations

import json

import pytest

from executive.hooks.runner import HookEnv, run_memory_hook
from executive.hookspecs import SPECS, HookName
from executive.memory.runtime import MemoryRuntime
from executive.settings import variable_names
from executive.workspace.ledger import WorkLedger
from tests.hooks.conftest import (
    ALL_ON,
    SAMPLE_CONTEXTS,
    post_run,
    pre_spawn,
    settings_for,
)
from tests.memory.conftest import open_store
from tests.memory.faults import FaultyStore

pytestmark = pytest.mark.anyio


async def run_all(env: HookEnv) -> dict[str, object]:
    return {
        name.value: await run_memory_hook(name.value, SAMPLE_CONTEXTS[name](), env)
        for name in HookName
    }


@pytest.mark.parametrize("master", [None, "false", "FALSE", "False"])
async def test_master_off_skips_all_five_and_touches_no_store(agent_home, monkeypatch, master):
    settings = settings_for(agent_home, monkeypatch, V3_MEMORY_ENABLED=master or "")
    runtime = MemoryRuntime(settings)
    results = await run_all(HookEnv(settings, runtime))
    for result in results.values():
        assert (result.ran, result.skipped, result.reason) == (False, True, "V3_MEMORY_ENABLED off")
        assert result.tool_calls == [] and result.final_text == ""
    assert runtime.opened is False  # no store, no embedding model


@pytest.mark.parametrize("hook", list(HookName))
async def test_master_on_and_one_flag_off_skips_that_hook_with_its_reason(
    agent_home, monkeypatch, hook
):
    flag = SPECS[hook].flag
    settings = settings_for(agent_home, monkeypatch, **{flag: "false"})
    runtime = MemoryRuntime(settings)
    result = await run_memory_hook(hook.value, SAMPLE_CONTEXTS[hook](), HookEnv(settings, runtime))
    assert (result.skipped, result.reason) == (True, f"{flag} off")
    assert runtime.opened is False


@pytest.mark.parametrize("value", ["", "FALSE"])
async def test_an_empty_or_false_flag_is_off(agent_home, monkeypatch, value):
    settings = settings_for(agent_home, monkeypatch, V3_MEM_HOOK_PRE_SPAWN=value)
    result = await run_memory_hook(
        "pre-spawn-pack", pre_spawn(), HookEnv(settings, MemoryRuntime(settings))
    )
    assert result.reason == "V3_MEM_HOOK_PRE_SPAWN off"


def test_flag_names_are_the_originals():
    flags = {spec.flag for spec in SPECS.values()}
    assert flags <= set(variable_names())  # each one a setting, read by name
    assert set(ALL_ON) > flags


async def test_unknown_hook_is_an_error_value(env):
    result = await run_memory_hook("post-lunch", post_run(), env)
    assert result.error == "unknown hook 'post-lunch'" and not result.ran


async def test_a_successful_write_hook_logs_ok_with_histogram_tail_and_ledger(env, logs):
    result = await run_memory_hook("post-run-harvest", post_run(), env)
    assert result.outcome == "ok", result.error
    assert result.writes.succeeded == 1
    [event] = [r for r in logs() if r["event"] == "hook.finished"]
    assert event["outcome"] == "ok" and event["hook"] == "post-run-harvest"
    assert event["tools"] == {"memory.add": 1}
    assert event["tail"] == result.final_text[-400:] and "## Harvest summary" in event["tail"]
    ledger = [
        json.loads(line)
        for line in (env.settings.home / "ledgers" / "work-ledger.jsonl").read_text().splitlines()
    ]
    assert ledger[-1]["event"] == "EXECUTIVE_SKILL_USED"
    assert ledger[-1]["usage_context"] == "memory-hook/post-run-harvest"
    assert ledger[-1]["outcome"] == "ok"


async def test_all_writes_failing_is_a_failure_never_ok(settings, tmp_path, logs):
    # The original's go-live bug: every write rejected or lost while the hook logged "ok".
    real = await open_store(tmp_path / "faulty")
    faulty = FaultyStore(real)
    faulty.mode = "raise"
    runtime = MemoryRuntime(settings, store=faulty)
    try:
        result = await run_memory_hook("post-run-harvest", post_run(), HookEnv(settings, runtime))
    finally:
        await real.close()
    assert result.outcome == "failed"
    assert result.writes.failed == result.writes.attempted == 1 and result.writes.succeeded == 0
    assert "not confirmed" in result.error
    [event] = [r for r in logs() if r["event"] == "hook.finished"]
    assert event["outcome"] == "failed" and event["level"] == "warning"
    assert event["tools"] == {"memory.add": 1}
    assert "ERROR" in event["tail"]


@pytest.mark.parametrize("mode", ["raise", "hang"])
async def test_a_failing_or_hanging_store_is_an_error_value_and_the_caller_goes_on(
    agent_home, monkeypatch, tmp_path, logs, mode
):
    # A hung store call never returns, so a short limit ends it just the same; a failing one
    # fails at once, so its limit is generous: no hook's own work races the clock.
    limit = "0.25" if mode == "hang" else "60"
    settings = settings_for(agent_home, monkeypatch, EXECUTIVE_HOOK_TIMEOUT_SECONDS=limit)
    real = await open_store(tmp_path / "faulty")
    faulty = FaultyStore(real, calls=("search", "search_scopes", "words", "list", "add"))
    faulty.mode = mode
    env = HookEnv(settings, MemoryRuntime(settings, store=faulty))
    try:
        outcomes = [
            await run_memory_hook(name.value, SAMPLE_CONTEXTS[name](), env) for name in HookName
        ]
    finally:
        await real.close()
    # The caller's loop went on through all five; each one a value.
    assert len(outcomes) == 5
    for result in outcomes:
        assert result.ran and result.outcome == "failed" and result.error
    if mode == "hang":
        assert any("timed out after 0.25s" in r.error for r in outcomes)
    else:
        assert any("injected outage" in r.error for r in outcomes)
    finished = [r for r in logs() if r["event"] == "hook.finished"]
    assert len(finished) == 5 and all(r["outcome"] == "failed" for r in finished)
    assert all("tools" in r and ("tail" in r or "answer_sha256" in r) for r in finished)


async def test_a_rejected_payload_is_a_failed_hook(env, logs):
    # A bundle whose app id is not a slug: its payloads are rejected before anything is sent.
    bad_item = pre_spawn().work_item.model_copy(update={"app_id": "Greeting_Page"})
    result = await run_memory_hook("post-run-harvest", post_run(work_item=bad_item), env)
    assert result.outcome == "failed"
    assert "Rejected" in result.error and "app_id" in result.error
    [event] = [r for r in logs() if r["event"] == "hook.finished"]
    assert event["outcome"] == "failed" and "app_id" in event["error"]
    assert await (await env.memory.view()).count() == 0


async def test_an_empty_cohort_is_left_out_and_the_write_succeeds(agent_home, monkeypatch):
    settings = settings_for(agent_home, monkeypatch, V3_MEM0_COHORT="")
    runtime = MemoryRuntime(settings)
    try:
        result = await run_memory_hook("post-run-harvest", post_run(), HookEnv(settings, runtime))
        assert result.outcome == "ok", result.error
        [record] = await (await runtime.view()).list()
        assert "cohort" not in record.metadata
    finally:
        await runtime.close()


async def test_the_work_ledger_is_optional_and_unwritable_ledgers_do_not_raise(env, tmp_path):
    blocked = tmp_path / "ledger-is-a-dir"
    blocked.mkdir()
    env.work_ledger = WorkLedger(blocked)
    result = await run_memory_hook("pre-spawn-pack", pre_spawn(), env)
    assert result.outcome == "ok"


@pytest.mark.parametrize("hook", [HookName.PRE_SPAWN, HookName.FAIL_DIAG])
async def test_a_read_hooks_answer_is_its_size_and_hash_at_info_and_its_tail_at_debug(env, hook):
    """D may write a reflective memory, but its diagnosis quotes memory as B's pack does."""
    import io
    import json
    import logging

    import structlog

    from executive.logs import configure_logging

    buffer = io.StringIO()
    configure_logging(fmt="json", level="debug", stream=buffer)
    try:
        result = await run_memory_hook(hook.value, SAMPLE_CONTEXTS[hook](), env)
    finally:
        structlog.reset_defaults()
        logging.getLogger().handlers.clear()
    lines = [json.loads(x) for x in buffer.getvalue().splitlines() if x.startswith("{")]
    [finished] = [x for x in lines if x["event"] == "hook.finished"]
    [answer] = [x for x in lines if x["event"] == "hook.answer"]
    assert finished["level"] == "info" and "tail" not in finished
    assert finished["answer_chars"] == len(result.final_text)
    assert answer["level"] == "debug" and answer["tail"] == result.tail

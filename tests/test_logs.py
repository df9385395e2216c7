from __future__ import annotations

import io
import json
import logging
import warnings

import pytest
import structlog

from executive.logs import configure_logging, get_logger
from executive.redact import REDACTED


@pytest.fixture
def stream(monkeypatch):
    out = io.StringIO()
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "sk-live-abcdefghijklmnop")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_0123456789abcdef")
    configure_logging(fmt="json", level="debug", secrets=["platform-key-123456"], stream=out)
    yield out
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()


def lines(out: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_one_json_object_per_line_with_timestamp_level_event_and_context(stream):
    log = get_logger("executive.test")
    with structlog.contextvars.bound_contextvars(
        iteration=3, bundle="demo", hook="post-run-harvest"
    ):
        log.info("hook.finished", duration_ms=12)
    [record] = lines(stream)
    assert record["event"] == "hook.finished"
    assert record["level"] == "info"
    assert record["timestamp"].endswith("Z")
    assert (record["iteration"], record["bundle"], record["hook"]) == (
        3,
        "demo",
        "post-run-harvest",
    )


def test_foreign_loggers_go_through_the_same_pipeline(stream):
    logging.getLogger("mem0.memory.main").warning("spaCy is not installed")
    logging.getLogger("apscheduler.scheduler").info("Scheduler started")
    # What the warnings machinery calls once captureWarnings is on (pytest records warnings
    # itself, so going through warnings.warn would test pytest, not us).
    warnings.showwarning("a library warning", FutureWarning, "lib.py", 1)
    records = lines(stream)
    assert [r["logger"] for r in records] == [
        "mem0.memory.main",
        "apscheduler.scheduler",
        "py.warnings",
    ]
    assert all("timestamp" in r and "level" in r for r in records)
    # A stable event name; the library's own sentence beside it.
    assert {r["event"] for r in records} == {"foreign.log"}
    assert records[0]["message"] == "spaCy is not installed"
    assert "a library warning" in records[2]["message"]


def test_psycopg_pool_warnings_get_a_stable_event_name(stream):
    import psycopg_pool  # noqa: F401  (its logger is the one the pool warns through)

    pool_log = logging.getLogger("psycopg.pool")
    pool_log.warning("error connecting in %r: %s", "pool-1", "connection refused")
    [record] = lines(stream)
    assert record["event"] == "foreign.log"
    assert record["logger"] == "psycopg.pool"
    assert record["message"] == "error connecting in 'pool-1': connection refused"


def test_secrets_are_redacted_wherever_they_appear(stream):
    log = get_logger("executive.test")
    log.info(
        "call",
        note="using sk-live-abcdefghijklmnop and ghp_0123456789abcdef",
        nested={"deep": ["platform-key-123456"]},
        headers={"Authorization": "Token m0-abcdefghijklmnopqrstuv"},
        api_key="whatever",
    )
    logging.getLogger("httpx").warning("header 'authorization': 'Token zzzz-secret-value'")
    text = stream.getvalue()
    for secret in [
        "sk-live-abcdefghijklmnop",
        "ghp_0123456789abcdef",
        "platform-key-123456",
        "m0-abcdefghijklmnopqrstuv",
        "zzzz-secret-value",
        "whatever",
    ]:
        assert secret not in text
    assert REDACTED in text


def test_exceptions_are_structured_and_redacted(stream):
    log = get_logger("executive.test")
    try:
        raise RuntimeError("failed with platform-key-123456")
    except RuntimeError:
        log.exception("boom")
    [record] = lines(stream)
    assert "platform-key-123456" not in json.dumps(record)
    assert record["exception"][0]["exc_type"] == "RuntimeError"


@pytest.mark.parametrize(("level", "library_info_shown"), [("info", False), ("debug", True)])
def test_libraries_speak_at_warning_unless_the_operator_asks_for_debug(level, library_info_shown):
    out = io.StringIO()
    configure_logging(fmt="json", level=level, stream=out)
    try:
        # mem0 logs memory text at info; APScheduler announces every job run there.
        logging.getLogger("mem0.memory.main").info("memory text: the deploy key is in vault")
        logging.getLogger("apscheduler.executors.default").info("Running job")
        logging.getLogger("apscheduler.scheduler").warning("job missed")
        get_logger("executive.loop").info("loop.idle")
        events = [record.get("message") or record["event"] for record in lines(out)]
    finally:
        structlog.reset_defaults()
        logging.getLogger().handlers.clear()
        logging.getLogger("executive").setLevel(logging.NOTSET)
    assert "loop.idle" in events and "job missed" in events
    assert ("Running job" in events) is library_info_shown
    assert any("memory text" in e for e in events) is library_info_shown

"""`executive mem` in real processes, against the real embedded store."""

from __future__ import annotations

import json
import signal

import pytest

from tests.conftest import run_cli, set_env
from tests.daemonproc import Daemon
from tests.memory.payloads import partial

ON = {"V3_MEMORY_ENABLED": "true"}


def mem(home, *args: str, env=None, process=False):
    return run_cli("--home", str(home), "mem", *args, env={**ON, **(env or {})}, process=process)


def test_the_sync_writes_principles_and_a_new_process_finds_one_with_filters(home):
    synced = mem(home, "backfill", "--lane", "A")
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert json.loads(synced.stdout)["lanes"]["A"]["written"] >= 3

    found = mem(
        home,
        "search",
        "--json",
        "--query",
        "Am I allowed to push my commits to the remote repository?",
        "--type",
        "principle",
        "--app-id",
        "_global",
        "--min-confidence",
        "0.7",
        process=True,
    )
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results[0]["metadata"]["type"] == "principle"
    assert "push to any remote" in results[0]["text"]


def test_mem_add_of_a_principle_is_refused_by_field_and_writes_nothing(home):
    refused = mem(home, "add", "--payload", json.dumps(partial("principle")))
    assert refused.returncode == 1
    body = json.loads(refused.stdout)
    assert body["rejections"] == [
        {
            "field": "metadata.type",
            "reason": "a principle is written only by the constitution sync (constitution.md)",
            "item": 0,
        }
    ]
    assert json.loads(mem(home, "list", "--json").stdout)["count"] == 0
    validated = mem(home, "validate", "--payload", json.dumps(partial("principle")))
    assert validated.returncode == 1
    assert [r["field"] for r in json.loads(validated.stdout)["rejections"]] == ["metadata.type"]


def test_bad_json_and_rejections_exit_1_listing_everything(home):
    bad = mem(home, "add", "--payload", "{not json")
    assert bad.returncode == 1
    assert "not valid JSON" in json.loads(bad.stdout)["error"]

    payload = partial("semantic", app_id="_nope", metadata={"confidence": 0.1, "env": "staging"})
    rejected = mem(home, "add", "--batch", json.dumps([partial("episodic"), payload]))
    assert rejected.returncode == 1
    body = json.loads(rejected.stdout)
    assert body["ok"] is False
    fields = {(r["item"], r["field"]) for r in body["rejections"]}
    assert {(1, "app_id"), (1, "metadata.confidence"), (1, "metadata.env")} <= fields

    validated = mem(home, "validate", "--payload", json.dumps(payload))
    assert validated.returncode == 1
    assert len(json.loads(validated.stdout)["rejections"]) == 3


def test_memory_switched_off_skips_writes_with_exit_0(home):
    result = mem(
        home,
        "add",
        "--payload",
        json.dumps(partial("episodic")),
        env={"V3_MEMORY_ENABLED": "false"},
    )
    assert result.returncode == 0
    assert json.loads(result.stdout) == {
        "ok": True,
        "skipped": True,
        "reason": "V3_MEMORY_ENABLED off",
    }


def test_the_cli_talks_to_the_running_daemon_which_holds_the_store(home):
    set_env(home, V3_MEMORY_ENABLED="true")
    daemon = Daemon(home, {"IDLE_SLEEP_SECONDS": "30"})
    try:
        daemon.wait_for("control.listening")
        # Principles come only from constitution.md: the socket refuses them, whoever asks.
        refused = mem(home, "add", "--batch", json.dumps([partial("principle")]))
        assert refused.returncode == 1
        added = mem(home, "add", "--batch", json.dumps([partial("episodic"), partial("semantic")]))
        assert added.returncode == 0, added.stdout + added.stderr
        ids = [r["memory_id"] for r in json.loads(added.stdout)["results"]]

        listed = json.loads(mem(home, "list", "--json").stdout)
        assert listed["count"] == 2
        got = json.loads(mem(home, "get", ids[1]).stdout)
        assert got["metadata"]["type"] == "semantic"

        updated = mem(home, "update", ids[1], "--importance", "low")
        assert json.loads(updated.stdout)["updated"]["metadata"]["importance"] == "low"
        trail = json.loads(mem(home, "history", ids[1]).stdout)
        assert [h["event"] for h in trail["history"]][:1] == ["ADD"]

        deleted = mem(home, "delete", ids[1])
        assert json.loads(deleted.stdout) == {"ok": True, "id": ids[1], "deleted": True}
        missing = mem(home, "get", ids[1])
        assert missing.returncode == 1 and "no memory" in json.loads(missing.stdout)["error"]

        human = mem(home, "search", "--query", "Which bundle run passed all its verifiers?")
        assert "(episodic/medium)" in human.stdout and "1 result(s)." in human.stdout

        daemon.signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    finally:
        daemon.kill()
    assert not (home / ".state" / "executive.sock").exists()


@pytest.mark.parametrize(
    "args", [["update", "some-id"], ["add"], ["add", "--payload", "{}", "--batch", "[]"]]
)
def test_usage_errors_are_clear(home, args):
    result = mem(home, *args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr


# Break 5 at the shell: a RecursionError traceback, and an error that named no field.
def test_deep_json_and_a_lone_surrogate_are_refused_by_name_with_exit_1(home):
    deep = mem(home, "add", "--payload", "[" * 50_000 + "]" * 50_000)
    assert deep.returncode == 1 and "Traceback" not in deep.stderr
    assert "nests 50000 levels deep" in json.loads(deep.stdout)["error"]

    payload = json.dumps(partial("semantic", text="fact \ud800 here"))  # escaped: \ud800
    surrogate = mem(home, "add", "--payload", payload)
    assert surrogate.returncode == 1 and "Traceback" not in surrogate.stderr
    body = json.loads(surrogate.stdout)
    assert [(r["field"], "UTF-8" in r["reason"]) for r in body["rejections"]] == [("text", True)]
    assert json.loads(mem(home, "list", "--json").stdout)["count"] == 0

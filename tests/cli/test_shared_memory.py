"""Several executives, one memory: two homes on one Postgres store, through the real CLI."""

from __future__ import annotations

import json
import re
import signal

import psycopg
import pytest

from executive.workspace.scaffold import scaffold
from tests.conftest import run_cli, set_env
from tests.daemonproc import Daemon
from tests.hooks.conftest import pre_spawn
from tests.memory.payloads import partial

pytestmark = pytest.mark.postgres


def mem(home, *args):
    return run_cli("--home", str(home), "mem", *args)


def ok(ran):
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return json.loads(ran.stdout)


@pytest.fixture
def homes(tmp_path, pg_url):
    a = scaffold(tmp_path / "home-a").home
    b = scaffold(tmp_path / "home-b").home
    with (b / "constitution.md").open("a") as f:
        f.write("8. Prefer one small commit per step over one large commit.\n")
    for home, peer in ((a, b), (b, a)):
        set_env(
            home,
            EXECUTIVE_STORE="postgres",
            EXECUTIVE_STORE_URL=pg_url,
            V3_MEM0_USER_ID="shared-user",
            V3_MEMORY_ENABLED="true",
            EXECUTIVE_PEER_HOMES=str(peer),
        )
    return a, b


def test_two_executives_share_principles_and_global_lessons_not_app_scopes(homes, pg_url, tmp_path):
    a, b = homes
    # Principles: each executive's constitution sync; the rules both have are stored once.
    assert ok(mem(a, "backfill", "--lane", "A"))["lanes"]["A"]["written"] == 7
    lane_b = ok(mem(b, "backfill", "--lane", "A"))["lanes"]["A"]
    assert (lane_b["written"], lane_b["skipped"]) == (1, 7)
    # A's sync again: B's rule 8 is not A's to prune.
    assert ok(mem(a, "backfill", "--lane", "A"))["lanes"]["A"]["pruned"] == 0
    assert ok(mem(b, "list", "--app-id", "_global", "--json"))["count"] == 8

    mine = partial("semantic", text="The greeting page renders best with one stylesheet.")
    mine["app_id"] = "greeting-page"
    shared = partial("semantic", text="The package mirror drops the first connection of a day.")
    shared["app_id"] = "_global"
    theirs = partial("semantic", text="Bundle other-bundle needs its cache cleared first.")
    theirs["app_id"] = "other-bundle"
    ok(mem(a, "add", "--batch", json.dumps([mine, shared])))
    ok(mem(b, "add", "--payload", json.dumps(theirs)))
    again = ok(mem(b, "add", "--payload", json.dumps(shared)))  # the same lesson, from B
    assert again["skipped"] == 1 and again["succeeded"] == 0

    listed = ok(mem(b, "list", "--json"))["results"]
    writers = {r["text"]: r["metadata"]["executive"] for r in listed}
    assert writers[mine["text"]] == "home-a" and writers[theirs["text"]] == "home-b"
    assert writers[shared["text"]] == "home-a"
    assert len(listed) == 11

    # B's pack for its own bundle: the shared principles and lessons, not A's app scope.
    context = pre_spawn().model_dump(mode="json")
    context["work_item"] |= {"app_id": "other-bundle", "bundle_slug": "other-bundle"}
    path = tmp_path / "context.json"
    path.write_text(json.dumps(context))
    hook = ["hooks", "run", "pre-spawn-pack", "--context", str(path), "--force", "--json"]
    ran = run_cli("--home", str(b), *hook, "--engine", "builtin")
    pack = ok(ran)["memory_pack"]
    assert "Never commit or push to any remote" in pack  # A's constitution, shared
    assert "one small commit per step" in pack  # B's own rule
    assert mine["text"] not in pack  # A's bundle keeps its scope

    # Drift compares with both homes' ledgers: clean from either side.
    assert ok(mem(a, "drift"))["clean"] and ok(mem(b, "drift"))["clean"]
    with psycopg.connect(pg_url, autocommit=True) as conn:  # lose B's lesson
        conn.execute("DELETE FROM memories WHERE payload->>'data' = %s", (theirs["text"],))
    lost = mem(a, "drift")
    assert lost.returncode == 1
    report = json.loads(lost.stdout)
    assert len(report["missing"]) == 1
    assert report["by_home"] == {str(b): {"missing": report["missing"], "extra": [], "changed": []}}

    # A rebuild from A replays the union of both homes' ledgers.
    rebuilt = ok(mem(a, "rebuild"))
    assert rebuilt["memories"] == 11 and rebuilt["ledger_files"] >= 2
    assert ok(mem(b, "drift"))["clean"]
    listed = ok(mem(a, "list", "--json"))["results"]
    assert {r["text"]: r["metadata"]["executive"] for r in listed} == writers


def test_doctor_checks_the_postgres_server_and_never_prints_the_password(homes, pg_url):
    a, _ = homes
    ran = run_cli("--home", str(a), "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(ran.stdout)}
    assert checks["postgres"]["ok"], checks["postgres"]
    assert re.search(r"PostgreSQL 18\.\d+ .*: pgvector 0\.8\.\d+", checks["postgres"]["detail"])
    assert checks["memory store"]["ok"], checks["memory store"]
    secret = "postgresql://exec:hunter2-secret@127.0.0.1:1/nothing"
    set_env(a, EXECUTIVE_STORE_URL=secret, EXECUTIVE_STORE_TIMEOUT_SECONDS="2")
    down = run_cli("--home", str(a), "doctor", "--json")
    assert down.returncode == 1
    assert "hunter2-secret" not in down.stdout + down.stderr
    assert "exec:***@127.0.0.1:1" in down.stdout


def test_another_installation_rebuilding_purging_and_restoring_leaves_every_memory_of_ours(
    tmp_path, pg_url
):
    # Issue 30, break 7: two installations (each its own user id, no peers) on one database.
    # B's operator runs the durability tools through B's daemon; A's memories all survive.
    ours, theirs = scaffold(tmp_path / "ours").home, scaffold(tmp_path / "theirs").home
    for home in (ours, theirs):
        set_env(
            home,
            EXECUTIVE_STORE="postgres",
            EXECUTIVE_STORE_URL=pg_url,
            V3_MEMORY_ENABLED="true",
            EXECUTIVE_GIT_COMMIT="false",
        )
    lesson = partial("semantic", text="The package mirror drops the first connection of a day.")
    ok(mem(ours, "backfill", "--lane", "A"))
    ok(mem(ours, "add", "--batch", json.dumps([lesson, partial("procedural")])))
    before = {r["id"]: r["text"] for r in ok(mem(ours, "list", "--json"))["results"]}
    assert len(before) == 9
    ok(mem(theirs, "backfill", "--lane", "A"))
    ok(mem(theirs, "add", "--payload", json.dumps(partial("episodic"))))

    daemon = Daemon(theirs, {"IDLE_SLEEP_SECONDS": "30"})
    try:
        daemon.wait_for("control.listening", timeout=120)
        snapshot = ok(mem(theirs, "snapshot"))
        assert snapshot["total"] == 8  # its own memories: ours are not its to keep
        assert ok(mem(theirs, "rebuild"))["memories"] == 8
        assert ok(mem(theirs, "drift", "--fix"))["ok"]
        purged = ok(mem(theirs, "purge", "--env", "prod", "--yes"))
        assert (purged["matched"], purged["deleted"]) == (8, 8)
        restored = ok(mem(theirs, "restore", snapshot["path"]))
        assert (restored["memories"], restored["refused"]) == (8, [])
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(60) == 0, daemon.stderr
    finally:
        daemon.kill()

    after = {r["id"]: r["text"] for r in ok(mem(ours, "list", "--json"))["results"]}
    assert after == before
    assert ok(mem(ours, "drift"))["clean"]

"""End to end: the real daemon, real shell-script workers, the real embedded store."""

from __future__ import annotations

import json
import signal

import pytest

from tests.conftest import json_lines, run_cli
from tests.daemonproc import Daemon
from tests.loop.homes import MEMORY_ON, add_bundle, events, make_home, outputs

SECRET = "m0-abcdefghijklmnopqrstuvwxyz0123"

# Rule 1 of the scaffolded constitution; the daemon syncs the rules into principle memories.
RULE_ONE = (
    "Never commit or push to any remote unless the goal explicitly says so. (constitution rule 1)"
)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """One home, one long-running daemon, every kind of bundle; stopped by SIGTERM."""
    home = make_home(
        tmp_path_factory.mktemp("e2e"), **MEMORY_ON, EXECUTIVE_RETRO_AFTER_OUTCOMES="100"
    )
    add_bundle(
        home,
        "passes",
        "env > env.txt\necho ok > out.txt\n",
        priority="P0",
        verifiers=[{"builtin": "output_exists", "path": "out.txt"}],
    )
    add_bundle(
        home,
        "flaky",
        "n=$(cat .n 2>/dev/null || echo 0); n=$((n+1)); echo $n > .n\n"
        '[ "$n" -ge 3 ] || { echo "error: ECONNRESET talking to mirror $n" >&2; exit 1; }\necho fine > out.txt\n',
        priority="P1",
        verifiers=[{"run": "test -s out.txt"}],
    )
    add_bundle(
        home,
        "doomed",
        'echo "fatal: permission denied opening /etc/shadow (try $GOAL_ATTEMPT)" >&2\nexit 3\n',
        priority="P2",
        max_attempts=4,
    )
    add_bundle(
        home,
        "bad-verifier",
        "echo nope > out.txt\n",
        priority="P3",
        max_attempts=2,
        verifiers=[{"name": "says yes", "run": "grep -q yes out.txt"}],
    )
    malformed = home / "workspace" / "ondeck" / "malformed"
    malformed.mkdir()
    (malformed / "PROMPT.md").write_text("---\ntitle: Broken\npriority: P9\n---\nnope\n")

    daemon = Daemon(home, {"V3_MEM0_API_KEY": SECRET, "MEM0_EXTRA": "x", "V3_SOMETHING": "y"})
    try:
        for slug in ("passes", "flaky"):
            daemon.wait_for("goal.completed", timeout=240, bundle=slug)
        for slug in ("doomed", "bad-verifier"):
            daemon.wait_for("goal.blocked", timeout=240, bundle=slug)
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(60) == 0
    finally:
        daemon.kill()
    return home, daemon


def test_a_passing_bundle_completes_and_c_writes_an_episodic(scenario):
    home, _ = scenario
    assert (home / "workspace" / "completed" / "passes" / "STEPS.json").exists()
    [done] = events(home, "GOAL_COMPLETED", bundle="passes")
    episodic = json.loads(
        run_cli("--home", str(home), "mem", "list", "--json", "--app-id", "passes").stdout
    )
    [memory] = episodic["results"]
    assert memory["metadata"]["type"] == "episodic"
    # The run the ledger knows is the memory's run id (the contract's nonce ends both); its
    # text carries no id at all.
    nonce = done["contract_id"].rsplit("-", 1)[-1]
    assert memory["run_id"].endswith(f"-passes-{nonce}") and nonce not in memory["text"]


def test_a_bundle_that_fails_twice_then_passes(scenario):
    home, _ = scenario
    failed = events(home, "STEP_FAILED", bundle="flaky")
    assert [f["attempt"] for f in failed] == [1, 2]
    assert all("econnreset talking to mirror <n>" in f["signal"] for f in failed)
    [completed] = events(home, "STEP_COMPLETED", bundle="flaky")
    assert completed["attempts"] == 3
    memories = json.loads(
        run_cli("--home", str(home), "mem", "list", "--json", "--app-id", "flaky").stdout
    )
    assert sorted(r["metadata"]["type"] for r in memories["results"]) == ["episodic", "procedural"]


def test_failing_from_the_third_time_runs_d_and_the_limit_blocks(scenario):
    home, _ = scenario
    assert [f["attempt"] for f in events(home, "STEP_FAILED", bundle="doomed")] == [1, 2, 3, 4]
    diagnoses = [e for e in events(home, "EXECUTIVE_SKILL_USED", hook="failure-diagnosis")]
    assert len(diagnoses) >= 2  # attempts 3 and 4 of "doomed"
    [blocked] = events(home, "GOAL_BLOCKED", bundle="doomed")
    assert "failed 4 times" in blocked["reason"]
    assert (home / "workspace" / "blocked" / "doomed" / "PROMPT.md").exists()
    needs_you = (home / "workspace" / "needs-you.md").read_text()
    assert "blocked: doomed" in needs_you and "permission denied" in needs_you
    # The entry carries what a person needs to act: the error itself (not only "exit 3"),
    # Hook D's diagnosis, and the command that retries with the attempts reset.
    entry = needs_you[needs_you.index("blocked: doomed") :]
    assert "Last error (its last lines):" in entry
    assert "fatal: permission denied opening /etc/shadow (try 4)" in entry
    assert "Hook D's diagnosis:" in entry
    assert "bundle retry doomed" in entry
    state = json.loads((home / "workspace/blocked/doomed/STEPS.json").read_text())
    assert state["steps"][0]["diagnosis"]
    memories = json.loads(
        run_cli("--home", str(home), "mem", "list", "--json", "--app-id", "doomed").stdout
    )
    assert [r["metadata"]["type"] for r in memories["results"]] == ["reflective"]


def test_verifier_failures_count_as_failures(scenario):
    home, _ = scenario
    failed = events(home, "STEP_FAILED", bundle="bad-verifier")
    assert len(failed) == 2 and "verifier says yes failed: exit 1" in failed[0]["error"]
    assert failed[0]["verifiers"][0] == {
        "verifier": "says yes",
        "result": "FAIL",
        "message": "exit 1",
        "evidence": "",
    }


def test_the_workers_claude_md_carries_the_constitution_once_beside_the_pack(scenario):
    home, _ = scenario
    claude_md = (outputs(home) / "passes" / "CLAUDE.md").read_text()
    assert "## Memory Pack" in claude_md
    # The rule is in memory as a principle (Hook B packed it), and in the file verbatim:
    # the worker reads it once, in the operator's words.
    rule = RULE_ONE.removesuffix(" (constitution rule 1)")
    assert claude_md.count(rule) == 1
    assert "from constitution.md left out here: the constitution is above, whole" in claude_md
    assert "Never commit or push with git unless your goal explicitly says so" in claude_md


def test_the_worker_environment_holds_no_executive_tier_variable(scenario):
    home, _ = scenario
    env = (outputs(home) / "passes" / "env.txt").read_text()
    names = {line.split("=", 1)[0] for line in env.splitlines() if "=" in line}
    assert not {n for n in names if n.startswith(("V3_", "MEM0_", "EXECUTIVE_"))}
    assert SECRET not in env
    assert {"PATH", "HOME", "GOAL_BUNDLE", "GOAL_STEP", "GOAL_ATTEMPT"} <= names


def test_a_malformed_bundle_is_quarantined_with_a_clear_entry(scenario):
    home, _ = scenario
    assert (home / "workspace" / "blocked" / "malformed" / "PROMPT.md").exists()
    needs_you = (home / "workspace" / "needs-you.md").read_text()
    assert "malformed bundle: malformed" in needs_you
    assert "workspace/blocked/malformed/PROMPT.md" in needs_you and "priority" in needs_you


def test_every_log_line_is_json_and_the_key_never_shows(scenario):
    _, daemon = scenario
    json_lines("".join(daemon.lines))
    assert SECRET not in "".join(daemon.lines) + daemon.stderr


def test_with_b_off_there_is_no_pack_section(tmp_path):
    home = make_home(tmp_path)  # memory off: the pre-spawn hook is gated
    add_bundle(home, "plain", "echo ok > out.txt\n")
    for _ in range(2):
        result = run_cli("--home", str(home), "run", "--once")
        assert result.returncode == 0, result.stderr
    claude_md = (outputs(home) / "plain" / "CLAUDE.md").read_text()
    assert "## Memory Pack" not in claude_md and "{{MEMORY_PACK_SECTION}}" not in claude_md
    assert events(home, "GOAL_COMPLETED", bundle="plain")


def test_with_nothing_queued_an_iteration_makes_zero_store_calls(tmp_path):
    home = make_home(tmp_path, **{**MEMORY_ON, "V3_MEM_HOOK_PRE_WORK": "true"})
    result = run_cli("--home", str(home), "run", "--once")
    assert result.returncode == 0, result.stderr
    records = json_lines(result.stdout)
    assert not [r for r in records if r["event"].startswith(("store.", "hook."))]
    assert not (home / ".state" / "store").exists()


def test_a_bundle_added_from_the_cli_runs(tmp_path):
    home = make_home(tmp_path)
    added = run_cli(
        "--home",
        str(home),
        "bundle",
        "add",
        "Write a poem",
        "--command",
        "sh -c 'echo roses > poem.txt'",
        "--output-exists",
        "poem.txt",
        "--priority",
        "P1",
    )
    assert added.returncode == 0, added.stderr
    assert run_cli("--home", str(home), "run", "--once").returncode == 0
    assert (outputs(home) / "write-a-poem" / "poem.txt").read_text() == "roses\n"
    bad = run_cli("--home", str(home), "bundle", "add", "X", "--priority", "P9")
    assert bad.returncode == 1 and "priority" in bad.stderr
    # The name is the completed bundle's: refused, with where it is and a free name.
    again = run_cli(
        "--home", str(home), "bundle", "add", "Write a poem", "--command", "sh -c 'echo x > y'"
    )
    assert again.returncode == 1
    assert "a bundle named write-a-poem is already in workspace/completed/write-a-poem" in (
        again.stderr
    )
    assert "--slug write-a-poem-2 is free" in again.stderr
    assert not (home / "workspace" / "ondeck" / "write-a-poem").exists()


def test_what_the_workers_did_is_in_the_ledger_and_in_memory(scenario):
    home, _ = scenario
    [done] = events(home, "STEP_COMPLETED", bundle="passes")
    assert done["experience"]["files"] == [
        {"path": "env.txt", "change": "created"},
        {"path": "out.txt", "change": "created"},
    ]
    [episode] = json.loads(
        run_cli("--home", str(home), "mem", "list", "--json", "--app-id", "passes").stdout
    )["results"]
    assert episode["metadata"]["files"] == ["env.txt", "out.txt"]
    assert "Seen: changed env.txt, out.txt; verifiers passed" in episode["text"]
    # The human listing shows the files too, and a file finds its memories.
    listed = run_cli(
        "--home", str(home), "mem", "list", "--app-id", "passes", "--file", "out.txt"
    ).stdout
    assert "files=env.txt, out.txt" in listed and "1 result(s)." in listed

    failed = events(home, "STEP_FAILED", bundle="flaky")
    assert (
        failed[0]["experience"]["commands"][0]["error"] == "error: ECONNRESET talking to mirror 1"
    )
    flaky = json.loads(
        run_cli("--home", str(home), "mem", "list", "--json", "--app-id", "flaky").stdout
    )["results"]
    [lesson] = [m for m in flaky if m["metadata"]["type"] == "procedural"]
    # A command worker runs the same script each attempt: what its pass wrote is its work,
    # not a fix, so the lesson stays "retry it".
    assert "retry it" in lesson["text"]

    state = json.loads((home / "workspace/blocked/doomed/STEPS.json").read_text())
    # (The step keeps the diagnosis's last lines: this attempt's is among them.)
    assert (
        "ran `sh {bundle_dir}/work.sh`, which failed with “fatal: permission"
        in (state["steps"][0]["diagnosis"])
    )


def test_every_worker_started_line_has_its_worker_finished(scenario):
    _, daemon = scenario
    started = [r["contract_id"] for r in daemon.records if r.get("event") == "worker.started"]
    finished = [r["contract_id"] for r in daemon.records if r.get("event") == "worker.finished"]
    # Workers and their verifiers (which run under the same contract id) alike.
    assert len(started) > len(events(daemon.home, "STEP_STARTED"))
    assert sorted(started) == sorted(finished)

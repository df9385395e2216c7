"""`executive hooks run` in real processes: the gate, --force, the result, bad contexts."""

from __future__ import annotations

import json

import pytest

from executive.daemon.lock import daemon_lock
from executive.home import Home
from executive.untrusted import ending
from tests.conftest import run_cli
from tests.hooks.conftest import pre_spawn

# No Claude credentials anywhere the engine looks: nothing can reach the network.
NO_CLAUDE = {
    "ANTHROPIC_API_KEY": "",
    "ANTHROPIC_AUTH_TOKEN": "",
    "CLAUDE_CODE_OAUTH_TOKEN": "",
    "CLAUDE_CODE_USE_BEDROCK": "",
    "CLAUDE_CODE_USE_VERTEX": "",
    "CLAUDE_CODE_USE_FOUNDRY": "",
}


@pytest.fixture
def context_file(tmp_path):
    path = tmp_path / "pre-spawn.json"
    path.write_text(json.dumps(pre_spawn().model_dump(mode="json"), indent=2))
    return path


def hooks_run(home, *args, env=None):
    nobody = home.parent / "nobody"
    extra = {**NO_CLAUDE, "HOME": str(nobody), "CLAUDE_CONFIG_DIR": str(nobody), **(env or {})}
    return run_cli("--home", str(home), "hooks", "run", *args, env=extra)


def test_a_gated_hook_is_skipped_and_force_audits_it(home, context_file):
    skipped = hooks_run(home, "pre-spawn-pack", "--context", str(context_file))
    assert skipped.returncode == 0, skipped.stderr
    assert "skipped: V3_MEMORY_ENABLED off" in skipped.stdout
    assert "--force" in skipped.stdout

    forced = hooks_run(
        home,
        "pre-spawn-pack",
        "--context",
        str(context_file),
        "--force",
        "--engine",
        "builtin",
        "--json",
    )
    assert forced.returncode == 0, forced.stdout + forced.stderr
    result = json.loads(forced.stdout)
    assert (result["outcome"], result["engine"], result["forced"]) == ("ok", "builtin", True)
    assert result["memory_pack"].startswith("## Memory Pack")
    assert result["histogram"].get("memory.search", 0) >= 1
    assert result["tail"] == ending(result["final_text"], 400)  # from the start of a word
    ledger = (Home(home).work_ledger).read_text().splitlines()
    assert json.loads(ledger[-1])["event"] == "EXECUTIVE_SKILL_USED"


def test_claude_without_credentials_falls_back_and_says_so(home, context_file):
    ran = hooks_run(
        home, "pre-spawn-pack", "--context", str(context_file), "--force", "--engine", "claude"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "[forced: flags ignored for this audit run]" in ran.stdout
    assert "outcome   ok" in ran.stdout and "engine builtin" in ran.stdout
    assert "fallback  claude → builtin:" in ran.stdout
    assert "--- memory pack ---" in ran.stdout and "## Memory Pack" in ran.stdout
    assert "hook.engine_fallback" in ran.stderr  # logged, on stderr


def test_claude_without_credentials_and_no_fallback_fails_naming_why(home, context_file):
    ran = hooks_run(
        home,
        "pre-spawn-pack",
        "--context",
        str(context_file),
        "--force",
        "--engine",
        "claude",
        "--json",
        env={"EXECUTIVE_SKILL_ENGINE_FALLBACK": "false"},
    )
    assert ran.returncode == 1
    result = json.loads(ran.stdout)
    assert (result["outcome"], result["engine"]) == ("failed", "claude")
    assert result["error"].startswith("claude engine unavailable: ")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must hold a JSON object, not list"),
        (
            '{"current_step": {"number": 1, "title": "x"}, "vendor": "command"}',
            "work_item: Field required",
        ),
        (
            json.dumps({**pre_spawn().model_dump(mode="json"), "surprise": 1}),
            "surprise: Extra inputs are not permitted",
        ),
    ],
    ids=["not-json", "not-object", "missing-field", "extra-field"],
)
def test_a_bad_context_exits_2_naming_the_problem(home, tmp_path, content, message):
    path = tmp_path / "context.json"
    path.write_text(content)
    ran = hooks_run(home, "pre-spawn-pack", "--context", str(path))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert message in ran.stderr and str(path) in ran.stderr


def test_unknown_hook_engine_or_file_exit_2(home, context_file, tmp_path):
    assert (
        "unknown hook 'hook-z'" in hooks_run(home, "hook-z", "--context", str(context_file)).stderr
    )
    bad_engine = hooks_run(
        home, "pre-spawn-pack", "--context", str(context_file), "--engine", "gpt"
    )
    assert bad_engine.returncode == 2 and "unknown engine 'gpt'" in bad_engine.stderr
    missing = hooks_run(home, "pre-spawn-pack", "--context", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "cannot read the context file" in missing.stderr


def test_the_builtin_engine_refuses_while_a_daemon_holds_the_store(home, context_file):
    with daemon_lock(Home(home)):  # what a running daemon holds
        ran = hooks_run(
            home, "pre-spawn-pack", "--context", str(context_file), "--force", "--engine", "builtin"
        )
    assert ran.returncode == 1
    assert "holds the embedded memory store" in ran.stderr and "--engine claude" in ran.stderr

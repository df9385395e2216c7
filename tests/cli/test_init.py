from __future__ import annotations

import json
import stat

import pytest

from executive.hooks.llm.preflight import _API_VARS, _PROVIDER_VARS
from tests.conftest import run_cli

# Every variable a claude worker's credentials may come from, emptied where a test wants none
# (a developer's shell may carry any of them).
NO_CREDENTIALS = dict.fromkeys([*_API_VARS, *_PROVIDER_VARS, "CLAUDE_CONFIG_DIR"], "")


def test_init_makes_a_home_that_doctor_accepts(tmp_path):
    from executive.workers.claude_cli import bundled_cli

    home = tmp_path / "agent"
    created = run_cli("init", str(home))
    assert created.returncode == 0, created.stderr
    # No `claude` on this PATH: a fresh home's claude workers run the SDK's bundled CLI, and
    # doctor says which CLI it found.
    plain = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    doctor = run_cli("--home", str(home), "doctor", "--json", env=plain)
    checks = json.loads(doctor.stdout)
    cli = next(c for c in checks if c["name"] == "claude worker CLI")
    if bundled_cli() is None:  # a platform the SDK ships no CLI for: doctor fails and says so
        assert doctor.returncode == 1 and not cli["ok"]
        assert cli["detail"].startswith("no Claude Code CLI")
    else:
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert all(c["ok"] or c["warning"] for c in checks)
        assert cli["detail"] == f"{bundled_cli()} (from claude-agent-sdk's bundled CLI)"
    for name in ["home layout", "home is a git repository", ".env.executive is private"]:
        assert any(c["name"] == name and c["ok"] for c in checks), name
    # No credentials for a claude worker: said as a warning that names what fails and the fix.
    unknown = {**plain, **NO_CREDENTIALS, "HOME": str(tmp_path / "nobody")}
    bare = run_cli("--home", str(home), "doctor", "--json", env=unknown)
    [creds] = [c for c in json.loads(bare.stdout) if c["name"] == "claude worker credentials"]
    assert creds["warning"] and not creds["ok"]
    assert "every claude bundle" in creds["detail"] and "ANTHROPIC_API_KEY" in creds["fix"]
    keyed = run_cli(
        "--home", str(home), "doctor", "--json", env={**unknown, "ANTHROPIC_API_KEY": "sk-ant-x"}
    )
    [creds] = [c for c in json.loads(keyed.stdout) if c["name"] == "claude worker credentials"]
    assert creds["ok"] and creds["detail"] == "from ANTHROPIC_API_KEY"
    # A configured CLI that is not there fails, and says how to get one.
    missing = {**plain, "EXECUTIVE_CLAUDE_BIN": str(tmp_path / "no-claude")}
    refused = run_cli("--home", str(home), "doctor", env=missing)
    assert refused.returncode == 1
    assert (
        f"[FAIL] claude worker CLI: no Claude Code CLI: EXECUTIVE_CLAUDE_BIN={tmp_path / 'no-claude'}"
        in refused.stdout
    )
    assert "WORKER_VENDOR=command" in refused.stdout
    commanded = run_cli(
        "--home", str(home), "doctor", "--json", env={**missing, "WORKER_VENDOR": "command"}
    )
    assert commanded.returncode == 0, commanded.stdout + commanded.stderr


def test_init_layout_git_and_private_env(tmp_path):
    home = tmp_path / "agent"
    assert run_cli("init", str(home)).returncode == 0
    for folder in [
        "workspace/ondeck",
        "workspace/in-progress/P0",
        "workspace/in-progress/P4",
        "workspace/completed",
        "workspace/blocked",
        "ledgers/harvest-runs",
        "learning/retrospectives",
        "memory/snapshots",
        ".state",
    ]:
        assert (home / folder).is_dir(), folder
    env = (home / ".env.executive").read_text()
    # Private: no other account (user mode's worker account) reads ledgers or memory texts.
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / ".env.executive").stat().st_mode) == 0o600
    user_line = next(line for line in env.splitlines() if line.startswith("V3_MEM0_USER_ID="))
    assert len(user_line.split("=", 1)[1]) > 6
    assert ".state/" in (home / ".gitignore").read_text()
    assert ".env.executive" in (home / ".gitignore").read_text()
    assert (home / "constitution.md").read_text().count("\n1. ") == 1
    # A real home starts with nothing queued: only the demo brings work of its own.
    assert not any((home / "workspace/ondeck").glob("*/PROMPT.md"))
    log = run_cli("--home", str(home), "status", "--json")
    assert json.loads(log.stdout)["queue"]["ondeck"] == 0


def test_version_is_printed():
    from executive import __version__

    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"executive {__version__}"


COMMANDS = [["run", "--once"], ["run"], ["status"], ["doctor"], ["bundle", "list"], ["mem", "list"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_only_init_makes_a_home_every_other_command_refuses_and_writes_nothing(tmp_path, command):
    plain = {"EXECUTIVE_LOG_FORMAT": "console"}
    (tmp_path / "notes.txt").write_text("not a home")
    for folder in (tmp_path, tmp_path / "nowhere"):
        result = run_cli("--home", str(folder), *command, env=plain)
        assert result.returncode == 2, result.stdout + result.stderr
        assert (
            f"EXECUTIVE_HOME='{folder}'" in result.stderr and "not an agent home" in result.stderr
        )
        assert f"fix: executive init {folder}" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_init_twice_keeps_what_exists(tmp_path):
    home = tmp_path / "agent"
    run_cli("init", str(home))
    before = (home / ".env.executive").read_text()
    again = run_cli("init", str(home))
    assert again.returncode == 0
    assert "kept    .env.executive" in again.stdout
    assert (home / ".env.executive").read_text() == before


def test_status_reports_hooks_and_why(tmp_path):
    home = tmp_path / "agent"
    run_cli("init", str(home))
    report = json.loads(
        run_cli(
            "--home",
            str(home),
            "status",
            "--json",
            env={"V3_MEMORY_ENABLED": "true", "V3_MEM_HOOK_POST_RUN": "TRUE"},
        ).stdout
    )
    assert report["hooks"]["post-run-harvest"] == {
        "on": True,
        "flag": "V3_MEM_HOOK_POST_RUN",
        "reason": "on",
        "value": True,
        "source": "environment",
        "master_source": "environment",
    }
    assert report["hooks"]["pre-spawn-pack"]["reason"] == "V3_MEM_HOOK_PRE_SPAWN off"
    assert report["hooks"]["pre-spawn-pack"]["source"].endswith(".env.executive")
    assert report["daemon"]["running"] is False
    assert report["next_snapshot"].endswith("+00:00")


def test_a_home_made_inside_another_repository_gets_a_repository_of_its_own(tmp_path):
    import subprocess

    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("demo-home/\n")
    home = project / "demo-home"
    created = run_cli("init", "--demo", str(home))
    assert created.returncode == 0, created.stderr
    assert (home / ".git").is_dir()
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=home, capture_output=True, text=True
    )
    assert top.stdout.strip() == str(home.resolve())
    project_log = subprocess.run(
        ["git", "log", "--oneline"], cwd=project, capture_output=True, text=True
    )
    assert project_log.stdout == ""  # nothing was committed into the surrounding project
    doctor = json.loads(run_cli("--home", str(home), "doctor", "--json").stdout)
    assert any(c["name"] == "home is a git repository" and c["ok"] for c in doctor)


def test_doctor_warns_about_a_misspelt_key_and_names_the_real_one(tmp_path):
    home = tmp_path / "agent"
    run_cli("init", str(home))
    with (home / ".env.executive").open("a") as env:
        env.write("V3_MEM_HOOK_POSTRUN=true\n")
    result = run_cli("--home", str(home), "doctor")
    assert "[warn] unknown key V3_MEM_HOOK_POSTRUN" in result.stdout
    assert "did you mean V3_MEM_HOOK_POST_RUN?" in result.stdout


def test_doctor_warns_about_a_misspelt_key_in_the_process_environment(tmp_path):
    home = tmp_path / "agent"
    run_cli("init", str(home))
    result = run_cli("--home", str(home), "doctor", env={"V3_MEM_HOOK_FAILDIAG": "true"})
    assert "[warn] unknown key V3_MEM_HOOK_FAILDIAG: the process environment sets" in result.stdout
    assert "did you mean V3_MEM_HOOK_FAIL_DIAG?" in result.stdout
    assert "PM2's env, systemd's Environment=" in result.stdout


def test_a_command_prints_its_answer_on_stdout_and_no_log_line_there(tmp_path):
    from tests.loop.homes import add_bundle, make_home

    home = make_home(tmp_path)
    add_bundle(home, "stuck", "exit 1\n")
    blocked = home / "workspace" / "blocked"
    blocked.mkdir(parents=True, exist_ok=True)
    (home / "workspace" / "ondeck" / "stuck").rename(blocked / "stuck")
    result = run_cli("--home", str(home), "bundle", "retry", "stuck")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["queued workspace/ondeck/stuck again (attempts reset)"]


def test_init_into_a_repository_with_commits_of_its_own_asks_for_force(tmp_path):
    import subprocess

    code = tmp_path / "code"
    code.mkdir()
    git = ["git", "-C", str(code), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (code / "main.py").write_text("print('hi')\n")
    subprocess.run([*git, "add", "main.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "code"], check=True)
    refused = run_cli("init", str(code))
    assert refused.returncode == 1
    assert "is a git repository with 1 commit(s) of its own" in refused.stderr
    assert "--force" in refused.stderr
    assert not (code / "workspace").exists() and not (code / ".env.executive").exists()
    log = subprocess.run([*git, "log", "--format=%s"], capture_output=True, text=True)
    assert log.stdout == "code\n"
    forced = run_cli("init", "--force", str(code))
    assert forced.returncode == 0, forced.stderr
    assert (code / ".env.executive").is_file()
    # An agent home is no foreign repository: init again completes it, no --force needed.
    assert run_cli("init", str(code)).returncode == 0

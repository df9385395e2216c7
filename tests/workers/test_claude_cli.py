"""Which Claude Code CLI runs: the configured one, then PATH, then the SDK's bundled one."""

from __future__ import annotations

import pytest

from executive.workers import claude_cli


def _program(folder, name="claude"):
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return program


def test_claude_on_the_path_comes_before_the_bundled_one(tmp_path):
    program = _program(tmp_path / "bin")
    cli = claude_cli.resolve("claude", path=str(tmp_path / "bin"))
    assert (cli.path, cli.source) == (str(program), claude_cli.ON_PATH)
    assert cli.describe() == f"{program} (from PATH)"


def test_with_none_on_the_path_the_sdk_s_bundled_cli_runs(tmp_path):
    bundled = claude_cli.bundled_cli()
    if bundled is None:
        pytest.skip("claude-agent-sdk bundles no CLI for this platform")
    cli = claude_cli.resolve("claude", path=str(tmp_path))
    assert (cli.path, cli.source) == (str(bundled), claude_cli.BUNDLED)


def test_a_configured_cli_wins_and_a_missing_one_is_never_replaced(tmp_path):
    program = _program(tmp_path / "opt", "my-claude")
    _program(tmp_path / "bin")
    chosen = claude_cli.resolve(str(program), path=str(tmp_path / "bin"))
    assert (chosen.path, chosen.source) == (str(program), claude_cli.CONFIGURED)
    missing = claude_cli.resolve(str(tmp_path / "nowhere"), path=str(tmp_path / "bin"))
    assert missing.path is None
    assert missing.describe() == (
        f"no Claude Code CLI: EXECUTIVE_CLAUDE_BIN={tmp_path / 'nowhere'} is not an executable"
    )

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import anyio
import pytest

from executive.workers.isolation import sandbox
from executive.workers.verifiers import Check, run_all

pytestmark = pytest.mark.anyio
ENV = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}


async def test_builtins_and_commands_give_verifier_result_message_evidence(tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    (tmp_path / "empty.txt").write_text("")
    results = await run_all(
        [
            Check("output_exists", "has a", "a.txt"),
            Check("output_exists", "has b", "b.txt"),
            Check("output_exists", "not empty", "empty.txt"),
            Check("output_exists", "escape", "../outside"),
            Check("command", "greets", "grep hello a.txt"),
            Check("command", "fails", "echo why >&2; exit 4"),
            Check("command", "slow", "sleep 5", timeout_seconds=0.2),
        ],
        tmp_path,
        ENV,
    )
    assert [(r.verifier, r.result) for r in results] == [
        ("has a", "PASS"),
        ("has b", "FAIL"),
        ("not empty", "FAIL"),
        ("escape", "FAIL"),
        ("greets", "PASS"),
        ("fails", "FAIL"),
        ("slow", "FAIL"),
    ]
    assert results[4].evidence.strip() == "hello"
    assert results[5].message == "exit 4" and "why" in results[5].evidence
    assert "timed out" in results[6].message


async def test_git_status_clean_ignores_the_executives_own_files(tmp_path):
    await anyio.run_process(["git", "init", "-q"], cwd=tmp_path)
    (tmp_path / "CLAUDE.md").write_text("x")
    (tmp_path / ".executive").mkdir()
    (tmp_path / ".executive" / "PROMPT.md").write_text("x")
    [clean] = await run_all([Check("git_status_clean", "clean")], tmp_path, ENV)
    assert clean.passed
    (tmp_path / "work.txt").write_text("x")
    [dirty] = await run_all([Check("git_status_clean", "clean")], tmp_path, ENV)
    assert not dirty.passed and "work.txt" in dirty.evidence


@pytest.mark.skipif(
    sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot build namespaces here"
)
async def test_git_status_runs_in_the_sandbox_so_a_hostile_repo_config_is_contained(tmp_path):
    # The worker owns the repository, and git config can name programs (core.fsmonitor).
    await anyio.run_process(["git", "init", "-q"], cwd=tmp_path)
    outside = Path(tempfile.mkdtemp(prefix="executive-fsmonitor-", dir="/var/tmp"))
    try:
        await anyio.run_process(
            ["git", "config", "core.fsmonitor", f"touch {outside}/pwned; false"], cwd=tmp_path
        )
        iso = sandbox.choose("sandbox", hidden=[outside])
        [result] = await run_all([Check("git_status_clean", "clean")], tmp_path, ENV, iso)
        assert result.verifier == "clean"
        assert not (outside / "pwned").exists()
    finally:
        shutil.rmtree(outside, ignore_errors=True)


async def test_output_exists_does_not_follow_a_planted_link(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("the daemon's")
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.txt").symlink_to(outside)
    (out / "sub").symlink_to(tmp_path)
    results = await run_all(
        [
            Check("output_exists", "link", "result.txt"),
            Check("output_exists", "via", "sub/outside.txt"),
        ],
        out,
        ENV,
    )
    assert [r.result for r in results] == ["FAIL", "FAIL"]
    assert "symbolic link" in results[0].message

"""Agent homes for end-to-end tests: real bundles whose workers are real shell scripts."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml

from executive.files import read_jsonl
from tests.conftest import scaffolded, set_env

MEMORY_ON = {
    "V3_MEMORY_ENABLED": "true",
    "V3_MEM_HOOK_POST_RUN": "true",
    "V3_MEM_HOOK_PRE_SPAWN": "true",
    "V3_MEM_HOOK_FAIL_DIAG": "true",
    "V3_MEM_HOOK_POST_RETRO": "true",
    "V3_MEM_HOOK_PRE_WORK": "false",
}


def make_home(tmp: Path, **env: str) -> Path:
    home = scaffolded(tmp / "home")
    for example in (home / "workspace" / "ondeck").iterdir():
        if example.is_dir():
            for f in example.iterdir():
                f.unlink()
            example.rmdir()
    defaults = {
        "WORKER_VENDOR": "command",
        "IDLE_SLEEP_SECONDS": "0.2",
        "EXECUTIVE_SHUTDOWN_GRACE_SECONDS": "2",
        # Retries at once; the backoff has tests of its own.
        "EXECUTIVE_RETRY_BACKOFF_SECONDS": "0",
    }
    set_env(home, **{**defaults, **env})
    return home


def add_bundle(home: Path, slug: str, script: str, goal: str = "", **front: Any) -> Path:
    folder = home / "workspace" / "ondeck" / slug
    folder.mkdir(parents=True)
    work = folder / "work.sh"
    work.write_text("#!/bin/sh\nset -eu\n" + script)
    work.chmod(work.stat().st_mode | stat.S_IXUSR)
    spec = {
        "title": f"Bundle {slug}",
        "command": ["sh", "{bundle_dir}/work.sh"],
        "timeout_seconds": 60,
        **front,
    }
    (folder / "PROMPT.md").write_text(
        f"---\n{yaml.safe_dump(spec)}---\n{goal or f'Do the {slug} work.'}\n"
    )
    return folder


def ledger(home: Path) -> list[dict]:
    """Every event of the work ledger (a torn line, as a crash leaves it, is skipped)."""
    return list(read_jsonl(home / "ledgers" / "work-ledger.jsonl"))


def events(home: Path, name: str, **match: Any) -> list[dict]:
    return [
        e
        for e in ledger(home)
        if e["event"] == name and all(e.get(k) == v for k, v in match.items())
    ]


def outputs(home: Path) -> Path:
    return home.parent / f"{home.name}-outputs"

"""SWE-ContextBench Lite as ``bench/experience.py`` reads it: past sessions, later tasks, and
the mechanical relevance between them (the rules are in ``experience.py``'s docstring).

Nothing here touches a store: it turns the ``cases`` folder into :class:`Session` and task
dicts, names a task's gold files and says which sessions edited them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from executive import relpath
from executive.workers.record import runlog

PAST = "SWEContextBench Lite Past Experience"
RELATED = "SWEContextBench Lite"
EDITS = ("Edit", "MultiEdit", "Write")
_TESTBED = re.compile(r"(?:^|/)testbed/(?:[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+/)?(.+)$")
_FIELD = re.compile(r"^\s*(instance_id|repo):\s*(\S+)\s*$", re.MULTILINE)
_STATEMENT = re.compile(r"^\s*problem_statement:\s?(.*)", re.MULTILINE | re.DOTALL)
_NOT_GOLD_DIRS = ("doc", "docs", "test", "tests", "testing")
_NOT_GOLD_NAMES = ("CHANGES", "AUTHORS", "README")
_NOT_GOLD_SUFFIXES = (".rst", ".txt", ".md")


def repo_path(raw: str) -> str | None:
    """``./swebench_9_15/testbed/django__django/django/utils/text.py`` → ``django/utils/text.py``."""
    found = _TESTBED.search(raw)
    return relpath.normal(found.group(1)) if found else None


def app_of(repo: str) -> str:
    """``django/django`` → ``django``; ``scikit-learn/scikit-learn`` → ``scikit-learn``."""
    return re.sub(r"[^a-z0-9]+", "-", repo.split("/")[-1].lower()).strip("-")


def is_gold(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return not (
        any(p in _NOT_GOLD_DIRS for p in parts[:-1])
        or name.startswith(_NOT_GOLD_NAMES)
        or name.endswith(_NOT_GOLD_SUFFIXES)
    )


def gold_files(patch: str) -> list[str]:
    changed = re.findall(r"^diff --git a/(\S+) b/\S+$", patch, re.MULTILINE)
    return sorted({p for p in changed if is_gold(p)})


@dataclass
class Session:
    id: str
    instance: str
    app: str
    statement: str
    day: str
    reading: runlog.Reading
    edited: set[str] = field(default_factory=set)

    @property
    def run_id(self) -> str:
        return f"{self.day}-{self.instance.split('__')[-1].lower()}-{self.id[:8]}"


def load_session(path: Path) -> Session | None:
    with path.open("rb") as handle:
        raw = handle.read().splitlines()
    reading = runlog.read_lines(raw)
    fields = dict(_FIELD.findall(reading.task))
    statement = _STATEMENT.search(reading.task)
    if "instance_id" not in fields or "repo" not in fields or statement is None:
        return None
    day = next(
        (m.group(1) for line in raw if (m := re.search(rb'"timestamp":"(\d{4}-\d\d-\d\d)', line))),
        b"2025-01-01",
    )
    edited = set()
    for event in reading.events:
        if isinstance(event, runlog.ToolCall) and event.name in EDITS:
            path_in = event.input.get("file_path")
            found = repo_path(path_in) if isinstance(path_in, str) else None
            if found:
                edited.add(found)
    return Session(
        id=path.stem,
        instance=fields["instance_id"],
        app=app_of(fields["repo"]),
        statement=statement.group(1).strip(),
        day=day.decode() if isinstance(day, bytes) else day,
        reading=reading,
        edited=edited,
    )


def read_ids(path: Path | None) -> set[str] | None:
    """One instance id a line (blank lines skipped); None for no file."""
    if path is None:
        return None
    return {line.strip() for line in path.read_text().splitlines() if line.strip()}


def load_tasks(
    folder: Path, ids: set[str] | None, exclude: set[str] | None = None
) -> list[dict[str, Any]]:
    """The related tasks named by ``ids`` (every one when None), less those in ``exclude``
    (``--exclude-ids``: the development ids leave the held-out tasks)."""
    every = [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]
    known = {task["instance_id"] for task in every}
    for name, given in (("related", ids), ("excluded", exclude)):
        missing = sorted((given or set()) - known)
        if missing:
            raise SystemExit(f"{name} ids not in {folder}: {', '.join(missing[:5])}")
    tasks = [t for t in every if ids is None or t["instance_id"] in ids]
    return [t for t in tasks if not (exclude and t["instance_id"] in exclude)]


def relevant_sessions(task: dict[str, Any], sessions: list[Session]) -> tuple[list[str], set[str]]:
    """The task's gold files, and the ids of the sessions of its project that edited one."""
    gold = gold_files(task["patch"])
    app = app_of(task["repo"])
    return gold, {s.id for s in sessions if s.app == app and s.edited & set(gold)}

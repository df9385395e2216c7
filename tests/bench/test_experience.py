"""``bench/experience.py`` on a few sessions and tasks this test writes (never the dataset):
the harness runs as a process, and its bookkeeping (paths, gold files, relevance) is right."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO, clean_env
from tests.workers import records as r

pytestmark = pytest.mark.store

ROOT = "./swebench_9_15/testbed"


def session(instance: str, repo: str, statement: str, edits: list[str]) -> list[str]:
    envelope = {
        "sessionId": instance,
        "cwd": "./swebench_9_15",
        "version": "2.0.67",
        "timestamp": "2025-12-12T15:19:53.159Z",
    }
    task = (
        "Fix this bug to solve the issue based on manual.yaml:\n"
        f"  instance_id: {instance}\n  repo: {repo}\n  base_commit: abc\n"
        f"  problem_statement: {statement}\n"
    )
    lines = [
        {"type": "summary", "summary": statement[:40]},
        {**envelope, "type": "user", "message": {"role": "user", "content": task}},
    ]
    steps = [
        r.call("t0", "Bash", command="python -m pytest tests/test_text.py -q"),
        r.result("t0", "E   AssertionError: expected 'a-b'", exit_code=1),
    ]
    for n, path in enumerate(edits, 1):
        steps += [
            r.call(f"e{n}", "Edit", file_path=f"{ROOT}/{path}", old_string="a", new_string="b"),
            r.result(f"e{n}", "ok"),
        ]
    steps += [
        r.call("t9", "Bash", command="python -m pytest tests/test_text.py -q"),
        r.result("t9", "3 passed in 0.2s"),
        r.said(f"I fixed {statement[:30]} in {', '.join(edits)}."),
    ]
    lines += [{**envelope, **json.loads(raw)} for raw in steps]
    return [json.dumps(line) for line in lines]


def related(instance: str, repo: str, statement: str, files: list[str]) -> dict:
    patch = "".join(
        f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-a\n+b\n" for f in files
    )
    return {"instance_id": instance, "repo": repo, "problem_statement": statement, "patch": patch}


def test_the_coding_benchmark_scores_a_pack_that_names_the_file_a_past_session_fixed(tmp_path):
    cases = tmp_path / "cases"
    past, later = cases / "SWEContextBench Lite Past Experience", cases / "SWEContextBench Lite"
    past.mkdir(parents=True)
    later.mkdir()
    sessions = {
        "s1": (
            "django__django-1",
            "django/django",
            "slugify() keeps leading dashes.",
            ["django/utils/text.py"],
        ),
        "s2": (
            "django__django-2",
            "django/django",
            "The admin list loses its filter.",
            ["django/contrib/admin/views/main.py"],
        ),
        "s3": (
            "sympy__sympy-3",
            "sympy/sympy",
            "simplify() hangs on nested powers.",
            ["sympy/simplify/simplify.py"],
        ),
    }
    for name, (instance, repo, statement, edits) in sessions.items():
        (past / f"{name}.jsonl").write_text(
            "\n".join(session(instance, repo, statement, edits)) + "\n"
        )
    tasks = [
        related(
            "django__django-9",
            "django/django",
            "slugify() keeps trailing underscores too.",
            ["django/utils/text.py", "docs/ref/utils.txt", "tests/utils_tests/test_text.py"],
        ),
        related(
            "sympy__sympy-8",
            "sympy/sympy",
            "lambdify loses the module.",
            ["sympy/utilities/lambdify.py"],
        ),
    ]
    for task in tasks:
        (later / f"{task['instance_id']}.json").write_text(json.dumps(task))
    ids = tmp_path / "ids.txt"
    ids.write_text("django__django-9\nsympy__sympy-8\n")
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir="/tmp"))
    try:
        ran = subprocess.run(
            [
                sys.executable,
                str(REPO / "bench" / "experience.py"),
                str(cases),
                "--related-ids",
                str(ids),
            ],
            cwd=REPO,
            env=clean_env({"TMPDIR": str(scratch), "PYTHONPATH": str(REPO / "src")}),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        left = sorted(p.name for p in scratch.iterdir())
    finally:
        shutil.rmtree(scratch)
    assert ran.returncode == 0, ran.stderr[-3000:]
    report = json.loads(ran.stdout)
    assert left == []
    # The docs and test files of the patch are not gold; s1 edited the gold file: relevant.
    assert (report["tasks_scored"], report["unscored"], report["ids"]) == (
        1,
        ["sympy__sympy-8"],
        ["django__django-9"],
    )
    assert report["sessions"] == 3 and report["memories"] >= 6
    assert set(report["strategies"]) == {"pack", "plain_10", "plain_matched", "plain_2k", "oracle"}
    assert report["strategies"]["oracle"] == {
        **report["strategies"]["oracle"],
        "file_hit": 1.0,
        "session_hit": 1.0,
        "session_recall": 1.0,
    }
    assert report["strategies"]["pack"]["file_hit"] == 1.0  # the pack names django/utils/text.py

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


SESSIONS = {
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
TASKS = [
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
    related(
        "django__django-7",
        "django/django",
        "The admin changelist drops its search filter on the second page.",
        ["django/contrib/admin/views/main.py"],
    ),
]
STRATEGIES = {"pack", "plain_10", "plain_matched", "plain_2k", "oracle", "transcripts"}


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    folder = tmp_path / "cases"
    past, later = folder / "SWEContextBench Lite Past Experience", folder / "SWEContextBench Lite"
    past.mkdir(parents=True)
    later.mkdir()
    for name, (instance, repo, statement, edits) in SESSIONS.items():
        (past / f"{name}.jsonl").write_text(
            "\n".join(session(instance, repo, statement, edits)) + "\n"
        )
    for task in TASKS:
        (later / f"{task['instance_id']}.json").write_text(json.dumps(task))
    (tmp_path / "dev-ids.txt").write_text("django__django-9\nsympy__sympy-8\n")
    return folder


def bench(cases: Path, *args: str) -> tuple[dict, str]:
    """The harness as a process; its JSON report and its progress lines."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir="/tmp"))
    try:
        ran = subprocess.run(
            [sys.executable, str(REPO / "bench" / "experience.py"), str(cases), *args],
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
    assert left == []
    return json.loads(ran.stdout), ran.stderr


def test_the_coding_benchmark_scores_a_pack_that_names_the_file_a_past_session_fixed(cases):
    report, _ = bench(cases, "--related-ids", str(cases.parent / "dev-ids.txt"))
    # The docs and test files of the patch are not gold; s1 edited the gold file: relevant.
    assert (report["tasks_scored"], report["unscored"], report["ids"]) == (
        1,
        ["sympy__sympy-8"],
        ["django__django-9"],
    )
    assert report["sessions"] == 3 and report["memories"] >= 6
    assert set(report["strategies"]) == STRATEGIES
    oracle = report["strategies"]["oracle"]
    # Every entry of the oracle is from the relevant session: all its tokens, and its first.
    assert {k: oracle[k] for k in ("file_hit", "session_hit", "session_recall")} == {
        "file_hit": 1.0,
        "session_hit": 1.0,
        "session_recall": 1.0,
    }
    assert (oracle["precision"], oracle["first_entry_hit"], oracle["empty"]) == (1.0, 1.0, 0)
    assert report["strategies"]["pack"]["file_hit"] == 1.0  # the pack names django/utils/text.py
    for name, row in report["strategies"].items():
        assert set(row) >= {"precision", "first_entry_hit", "first_ranked_hit", "empty", "ms"}, name
        assert report["per_task"]["django__django-9"][name]["precision"] == row["precision"]
    # Raw transcripts: both django sessions are two chunks each and all fit the budget, so the
    # answer holds the relevant session's chunks (first: they name slugify) and the other's.
    chunks = report["strategies"]["transcripts"]
    assert report["transcript_chunks"] == {"django": 4}
    assert (chunks["file_hit"], chunks["session_recall"], chunks["first_entry_hit"]) == (
        1.0,
        1.0,
        1.0,
    )
    assert 0.3 < chunks["precision"] < 0.7
    assert 0 < chunks["tokens"]["p50"] <= 2000


def test_the_held_out_split_is_every_related_task_but_the_excluded_and_vectors_are_kept(
    cases, tmp_path
):
    cache = tmp_path / "vectors"
    dev, _ = bench(
        cases, "--related-ids", str(cases.parent / "dev-ids.txt"), "--transcript-cache", str(cache)
    )
    held, progress = bench(
        cases, "--exclude-ids", str(cases.parent / "dev-ids.txt"), "--transcript-cache", str(cache)
    )
    assert (held["tasks_scored"], held["ids"], held["unscored"]) == (1, ["django__django-7"], [])
    assert held["protocol"]["exclude_ids"].endswith("dev-ids.txt")
    assert held["strategies"]["oracle"]["session_recall"] == 1.0  # s2 edited admin's main.py
    # The django chunks' vectors were embedded by the first run and read back by the second.
    assert [p.name.split("-")[0] for p in cache.iterdir()] == ["django"]
    assert "django: 4 chunks, 4 from the cache" in progress
    assert dev["transcript_chunks"] == held["transcript_chunks"] == {"django": 4}


def test_a_run_names_its_memories_the_same_way_every_time():
    """Ranking breaks exact ties by id: with mem0's random ids two runs of the same code kept
    different entries now and then, so the harness seeds the ids it hands out."""
    probe = (
        "import sys, uuid; sys.path.insert(0, 'bench'); import experience; "
        "experience.seed_ids(); print(uuid.uuid4(), uuid.uuid4())"
    )
    env = clean_env({"PYTHONPATH": str(REPO / "src")})

    def ids() -> str:
        ran = subprocess.run(
            [sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True
        )
        assert ran.returncode == 0, ran.stderr[-2000:]
        return ran.stdout

    first = ids()
    assert first == ids()
    assert len(set(first.split())) == 2  # still a fresh id each call

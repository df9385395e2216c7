"""Issue 30, break 1: a bundle nobody can parse used to stop every bundle, for good.

Its ``PROMPT.md`` frontmatter nested 600 levels deep (1.2 KB): ``yaml.safe_load`` raised
RecursionError, which no one caught, so every iteration failed at intake and no other bundle
ever ran, while ``/healthz`` said ok. Here a real daemon takes that bundle and its relatives
(an alias bomb, a date Python refuses, a state file that names a folder outside the workspace)
beside an ordinary one: the ordinary one completes, each hostile one is quarantined with its
reason in needs-you, and no iteration fails.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.daemonproc import Daemon
from tests.loop.homes import add_bundle, events, make_home


def spoil_frontmatter(folder: Path, lines: list[str]) -> None:
    """Put ``lines`` at the top of the bundle's frontmatter, the rest left valid."""
    prompt = folder / "PROMPT.md"
    prompt.write_text(prompt.read_text().replace("---\n", "---\n" + "\n".join(lines) + "\n", 1))


def laughs() -> list[str]:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    return lines + [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, 9)]


# slug -> (how to spoil it, the file the needs-you entry names, words of its reason)
HOSTILE = {
    "deep": (
        lambda f: spoil_frontmatter(f, ["x: " + "[" * 600 + "]" * 600]),
        "PROMPT.md",
        "nests deeper than 8 levels",
    ),
    "laughs": (lambda f: spoil_frontmatter(f, laughs()), "PROMPT.md", "anchors and aliases"),
    "misdated": (
        lambda f: spoil_frontmatter(f, ["model: 2001-13-45"]),
        "PROMPT.md",
        "month must be in 1..12",
    ),
    "escaping": (
        lambda f: (f / "STEPS.json").write_text(
            json.dumps(
                {"slug": "escaping", "title": "x", "priority": "../../../escaped", "steps": []}
            )
        ),
        "STEPS.json",
        "priority: Input should be 'P0'",
    ),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    home = make_home(tmp_path_factory.mktemp("hostile-bundles"))
    for slug, (spoil, _, _) in HOSTILE.items():
        spoil(add_bundle(home, slug, "echo never > never.txt\n", priority="P0"))
    add_bundle(
        home,
        "ordinary",
        "echo hello > hello.txt\n",
        priority="P4",
        verifiers=[{"builtin": "output_exists", "path": "hello.txt"}],
    )
    daemon = Daemon(home)
    try:
        daemon.wait_for("goal.completed", timeout=300, bundle="ordinary")
        status = run_cli("--home", str(home), "status", "--json")
        daemon.signal(signal.SIGTERM)
        code = daemon.wait(60)
    finally:
        daemon.kill()
    return {"home": home, "daemon": daemon, "code": code, "status": status}


def test_the_ordinary_bundle_completes_and_no_iteration_fails(served):
    home, daemon = served["home"], served["daemon"]
    assert served["code"] == 0, daemon.stderr
    assert events(home, "GOAL_COMPLETED", bundle="ordinary")
    assert not [r for r in daemon.records if r.get("event") == "iteration.failed"]
    assert "RecursionError" not in "".join(daemon.lines) + daemon.stderr
    # The daemon, asked while it ran, said it was healthy, and so did the exit code.
    assert served["status"].returncode == 0, served["status"].stdout
    assert json.loads(served["status"].stdout)["health"]["ok"] is True


@pytest.mark.parametrize("slug", list(HOSTILE))
def test_each_hostile_bundle_is_quarantined_with_its_reason(served, slug):
    home = served["home"]
    _, culprit, words = HOSTILE[slug]
    assert (home / "workspace" / "blocked" / slug / "PROMPT.md").is_file()  # kept as it was
    entries = (home / "workspace" / "needs-you.md").read_text().split("\n## ")
    [entry] = [e for e in entries if f"malformed bundle: {slug}\n" in e]
    assert f"file: workspace/blocked/{slug}/{culprit}" in entry
    assert words in entry, entry
    assert not events(home, "STEP_STARTED", bundle=slug)


def test_nothing_moved_where_a_state_file_pointed(served):
    home = served["home"]
    assert not (home.parent / "escaped").exists()
    assert not (home / "escaped").exists()

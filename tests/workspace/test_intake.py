"""Break 1: no bundle can hang intake, balloon it, or stop the others (real files, real FIFOs)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from executive.files import UnsafeFile, read_regular
from executive.home import Home
from executive.workspace.lifecycle import Workspace
from executive.workspace.state import StateError, read_state
from tests.loop.homes import add_bundle, make_home

GIGABYTE = 1 << 30


def prompt(folder: Path) -> Path:
    return folder / "PROMPT.md"


def fifo_prompt(folder: Path, outside: Path) -> None:
    prompt(folder).unlink()
    os.mkfifo(prompt(folder))


def zero_prompt(folder: Path, outside: Path) -> None:
    prompt(folder).unlink()
    prompt(folder).symlink_to("/dev/zero")


def gigabyte_prompt(folder: Path, outside: Path) -> None:
    with prompt(folder).open("r+b") as handle:  # sparse: a gigabyte of size, no disk used
        handle.truncate(GIGABYTE)


def torn_state(folder: Path, outside: Path) -> None:
    (folder / "STEPS.json").write_text('{"slug": "torn", "title": "Bundle torn", "ste')


def invalid_state(folder: Path, outside: Path) -> None:
    (folder / "STEPS.json").write_text(json.dumps({"slug": 7, "steps": "all of them"}))


def deep_state(folder: Path, outside: Path) -> None:
    (folder / "STEPS.json").write_text("[" * 50_000 + "]" * 50_000)


def numeric_state(folder: Path, outside: Path) -> None:
    (folder / "STEPS.json").write_text('{"slug": "bad", "steps": [{"number": ' + "9" * 5000 + "}]}")


def fifo_state(folder: Path, outside: Path) -> None:
    os.mkfifo(folder / "STEPS.json")


def linked_log(folder: Path, outside: Path) -> None:
    (folder / "PROGRESS_LOG.md").symlink_to(outside / "victim.txt")


def deep_prompt(folder: Path, outside: Path) -> None:
    # Issue 30, break 1: 1.2 KB of nesting made every iteration fail with a RecursionError.
    text = prompt(folder).read_text()
    prompt(folder).write_text(text.replace("---\n", "---\nx: " + "[" * 600 + "]" * 600 + "\n", 1))


def laughing_prompt(folder: Path, outside: Path) -> None:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, 9)]
    text = prompt(folder).read_text()
    prompt(folder).write_text(text.replace("---\n", "---\n" + "\n".join(lines) + "\n", 1))


def misdated_prompt(folder: Path, outside: Path) -> None:
    text = prompt(folder).read_text()
    prompt(folder).write_text(text.replace("---\n", "---\nmodel: 2001-13-45\n", 1))


def escaping_state(folder: Path, outside: Path) -> None:
    # A priority is a folder name under in-progress/: this one would move the bundle outside.
    state = {"slug": "bad", "title": "Bad", "priority": f"../../../../{outside.name}", "steps": []}
    (folder / "STEPS.json").write_text(json.dumps(state))


def linked_folder(folder: Path, outside: Path) -> None:
    # The whole bundle lives outside the home; ondeck holds only a link to it.
    real = outside / folder.name
    folder.rename(real)
    folder.symlink_to(real, target_is_directory=True)


# (form, how to spoil a good bundle, the file the needs-you entry names, words of the error)
BAD: list[tuple[str, Callable[[Path, Path], None], str, str]] = [
    ("prompt-fifo", fifo_prompt, "PROMPT.md", "not a regular file (a FIFO)"),
    ("prompt-dev-zero", zero_prompt, "PROMPT.md", "symbolic link"),
    ("prompt-gigabyte", gigabyte_prompt, "PROMPT.md", "the limit is 262144"),
    ("prompt-deep", deep_prompt, "PROMPT.md", "nests deeper than 8 levels"),
    ("prompt-laughs", laughing_prompt, "PROMPT.md", "anchors and aliases"),
    ("prompt-misdated", misdated_prompt, "PROMPT.md", "month must be in 1..12"),
    ("state-torn", torn_state, "STEPS.json", "not JSON"),
    ("state-invalid", invalid_state, "STEPS.json", "not a bundle state"),
    ("state-deep", deep_state, "STEPS.json", "levels deep"),
    ("state-fifo", fifo_state, "STEPS.json", "FIFO"),
    ("state-numeric", numeric_state, "STEPS.json", "a value cannot be read"),
    ("state-escaping", escaping_state, "STEPS.json", "priority: Input should be 'P0'"),
    ("log-linked", linked_log, "PROGRESS_LOG.md", "PROGRESS_LOG.md cannot be appended"),
    ("folder-linked", linked_folder, "PROMPT.md", "symbolic link"),
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.txt").write_text("untouched\n")
    return folder


def snapshot(folder: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        out[str(path.relative_to(folder))] = path.read_bytes() if path.is_file() else "dir"
    return out


@pytest.mark.parametrize(
    ("spoil", "culprit", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_a_bad_bundle_beside_a_good_one_is_quarantined_and_the_good_one_runs(
    tmp_path, outside, spoil, culprit, words
):
    home = make_home(tmp_path)
    add_bundle(home, "good", "true\n", priority="P1")
    bad = add_bundle(home, "bad", "true\n", priority="P0")
    spoil(bad, outside)
    before = snapshot(outside)
    workspace = Workspace(Home(home), "command")

    promoted = workspace.ingest()
    pick = workspace.select()

    assert [a.bundle.slug for a in promoted] == ["good"]
    assert pick is not None and pick.bundle.slug == "good"
    blocked = home / "workspace" / "blocked" / "bad"
    assert blocked.is_symlink() or blocked.is_dir()
    assert (blocked / culprit).exists() or culprit == "PROMPT.md"  # the file is kept
    entry = (home / "workspace" / "needs-you.md").read_text()
    assert "malformed bundle: bad" in entry
    assert f"workspace/blocked/bad/{culprit}" in entry and words in entry, entry
    assert snapshot(outside) == before  # nothing written where the bundle pointed


def test_a_state_that_goes_bad_in_progress_quarantines_only_its_bundle(tmp_path):
    home = make_home(tmp_path)
    add_bundle(home, "steady", "true\n", priority="P2")
    add_bundle(home, "spoiled", "true\n", priority="P0")
    workspace = Workspace(Home(home), "command")
    promoted = {a.bundle.slug: a for a in workspace.ingest()}
    (promoted["spoiled"].bundle.folder / "STEPS.json").write_text("{not json")
    assert workspace.select().bundle.slug == "steady"
    kept = home / "workspace" / "blocked" / "spoiled" / "STEPS.json"
    assert kept.read_text() == "{not json"


def test_a_prompt_over_the_configured_limit_is_refused_before_it_is_read(tmp_path):
    home = make_home(tmp_path)
    folder = add_bundle(home, "wordy", "true\n")
    with prompt(folder).open("a") as handle:
        handle.write("x" * 5_000)
    assert Workspace(Home(home), "command", max_prompt_bytes=4_096).ingest() == []
    assert "the limit is 4096" in (home / "workspace" / "needs-you.md").read_text()
    assert [a.bundle.slug for a in Workspace(Home(home), "command").ingest()] == []


def test_read_state_names_the_problem(tmp_path):
    (tmp_path / "STEPS.json").write_text('{"slug": "x"}')
    with pytest.raises(StateError, match=r"STEPS\.json is not a bundle state: title"):
        read_state(tmp_path)
    assert read_state(tmp_path / "absent") is None


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10) == b"x" * 10
    with pytest.raises(UnsafeFile, match="is 10 bytes; the limit is 9"):
        read_regular(path, 9)
    with pytest.raises(UnsafeFile, match="a folder"):
        read_regular(tmp_path, 9)

"""Writing and reading in a folder a worker controls, with the links it can plant."""

from __future__ import annotations

import os

import pytest

from executive.workers import safefs


@pytest.fixture
def scene(tmp_path):
    out, daemon = tmp_path / "out", tmp_path / "daemon"
    out.mkdir()
    daemon.mkdir()
    (daemon / "secret.txt").write_text("the daemon's own file")
    return out, daemon


def test_a_symlinked_folder_on_the_way_is_refused(scene):
    out, daemon = scene
    (out / "sub").symlink_to(daemon)
    with pytest.raises(safefs.UnsafePath):
        safefs.write(out, "sub/secret.txt", "overwritten")
    assert (daemon / "secret.txt").read_text() == "the daemon's own file"


def test_a_symlink_at_the_name_is_replaced_not_followed(scene):
    out, daemon = scene
    (out / "CLAUDE.md").symlink_to(daemon / "secret.txt")
    safefs.write(out, "CLAUDE.md", "ours")
    assert not (out / "CLAUDE.md").is_symlink() and (out / "CLAUDE.md").read_text() == "ours"
    assert (daemon / "secret.txt").read_text() == "the daemon's own file"


def test_a_hard_link_is_replaced_and_its_other_name_untouched(scene):
    out, daemon = scene
    os.link(daemon / "secret.txt", out / "CLAUDE.md")
    safefs.write(out, "CLAUDE.md", "ours")
    assert (daemon / "secret.txt").read_text() == "the daemon's own file"


def test_dot_dot_and_absolute_paths_are_refused():
    for bad in ("../daemon/secret.txt", "/etc/passwd", ".", ""):
        with pytest.raises(safefs.UnsafePath):
            safefs.parts(bad)


def test_reading_a_fifo_or_a_link_fails_at_once(scene):
    out, daemon = scene
    os.mkfifo(out / "result.json")
    with pytest.raises(safefs.UnsafePath, match="not a regular file"):
        safefs.read(out, "result.json", limit=100)
    (out / "link").symlink_to(daemon / "secret.txt")
    with pytest.raises(OSError):
        safefs.read(out, "link", limit=100)


def test_fresh_dir_unlinks_a_planted_link_and_makes_a_real_folder(scene):
    out, daemon = scene
    (out / ".executive").symlink_to(daemon)
    made = safefs.fresh_dir(out, ".executive")
    assert made.is_dir() and not made.is_symlink()
    assert (daemon / "secret.txt").exists()
    assert oct(made.stat().st_mode & 0o777) == "0o755"

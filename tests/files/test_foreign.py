"""Files someone else controls: writing and reading in a folder a worker controls, with the
links, FIFOs and hard links it can plant."""

from __future__ import annotations

import os

import pytest

from executive import files


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
    with pytest.raises(files.UnsafeFile):
        files.write_in(out, "sub/secret.txt", "overwritten")
    assert (daemon / "secret.txt").read_text() == "the daemon's own file"


def test_a_symlink_at_the_name_is_replaced_not_followed(scene):
    out, daemon = scene
    (out / "CLAUDE.md").symlink_to(daemon / "secret.txt")
    files.write_in(out, "CLAUDE.md", "ours")
    assert not (out / "CLAUDE.md").is_symlink() and (out / "CLAUDE.md").read_text() == "ours"
    assert (daemon / "secret.txt").read_text() == "the daemon's own file"


def test_a_hard_link_is_replaced_and_its_other_name_untouched(scene):
    out, daemon = scene
    os.link(daemon / "secret.txt", out / "CLAUDE.md")
    files.write_in(out, "CLAUDE.md", "ours")
    assert (daemon / "secret.txt").read_text() == "the daemon's own file"


def test_dot_dot_and_absolute_paths_are_refused(tmp_path):
    for bad in ("../daemon/secret.txt", "/etc/passwd", ".", ""):
        with pytest.raises(files.UnsafeFile):
            files.lstat_in(tmp_path, bad)


def test_reading_a_fifo_or_a_link_fails_at_once(scene):
    out, daemon = scene
    os.mkfifo(out / "result.json")
    with pytest.raises(files.UnsafeFile, match="not a regular file"):
        files.read_in(out, "result.json", 100)
    (out / "link").symlink_to(daemon / "secret.txt")
    with pytest.raises(files.UnsafeFile, match="symbolic link"):
        files.read_in(out, "link", 100)


def test_fresh_dir_unlinks_a_planted_link_and_makes_a_real_folder(scene):
    out, daemon = scene
    (out / ".executive").symlink_to(daemon)
    made = files.fresh_dir(out, ".executive")
    assert made.is_dir() and not made.is_symlink()
    assert (daemon / "secret.txt").exists()
    assert oct(made.stat().st_mode & 0o777) == "0o755"


def test_a_file_over_the_limit_is_refused_not_cut(scene):
    out, _ = scene
    (out / "CLAUDE.md").write_text("x" * 11)
    assert files.read_in(out, "CLAUDE.md", 11) == b"x" * 11
    with pytest.raises(files.UnsafeFile, match="11 bytes; the limit is 10"):
        files.read_in(out, "CLAUDE.md", 10)


def test_an_append_through_a_planted_link_or_fifo_is_refused_at_once(scene):
    out, daemon = scene
    (out / "PROGRESS_LOG.md").symlink_to(daemon / "secret.txt")
    os.mkfifo(out / "fifo.md")
    for name in ("PROGRESS_LOG.md", "fifo.md"):
        with pytest.raises(files.UnsafeFile, match=name):
            files.append_regular(out / name, "- a line\n")
    assert (daemon / "secret.txt").read_text() == "the daemon's own file"
    files.append_regular(out / "new.md", "- one\n")
    files.append_regular(out / "new.md", "- two\n")
    assert (out / "new.md").read_text() == "- one\n- two\n"

"""The daemon's own lock files: one holder at a time, never through a link."""

from __future__ import annotations

import os
import stat

import pytest

from executive.files import try_lock


def test_one_holder_at_a_time_and_free_once_it_closes(tmp_path):
    path = tmp_path / "held.lock"
    held = try_lock(path)
    assert held is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert try_lock(path) is None  # flock is per open file: this process counts as another
    os.close(held)
    again = try_lock(path)
    assert again is not None
    os.close(again)


def test_a_planted_link_is_refused_and_its_target_left_alone(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("not ours")
    (tmp_path / "held.lock").symlink_to(target)
    with pytest.raises(OSError):
        try_lock(tmp_path / "held.lock")
    assert target.read_text() == "not ours"

"""What git keeps of the workspace: a bundle's files, never a link, a FIFO or a huge file."""

from __future__ import annotations

import os

from executive.home import Home
from executive.workspace import kept


def test_a_bundles_own_files_are_kept_and_what_git_must_not_take_is_left_out(tmp_path):
    home = Home(tmp_path)
    bundle = home.completed / "poem"
    (bundle / "data").mkdir(parents=True)
    for name in ("PROMPT.md", "STEPS.json", "PROGRESS_LOG.md", "work.sh", "data/in.csv"):
        (bundle / name).write_text("x\n")
    home.needs_you.write_text("# Needs you\n")
    (bundle / "link.md").symlink_to("/etc/hostname")
    os.mkfifo(bundle / "pipe")
    with (bundle / "huge.bin").open("wb") as handle:
        handle.truncate(kept.MAX_BYTES + 1)  # sparse: no disk spent
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s\n")
    (bundle / "elsewhere").symlink_to(outside, target_is_directory=True)
    home.blocked.mkdir(parents=True)  # where intake quarantines a bundle that is a link
    (home.blocked / "planted").symlink_to(outside, target_is_directory=True)

    found = kept.workspace(home)

    names = sorted(str(p.relative_to(home.root)) for p in found.files)
    assert names == [
        "workspace/completed/poem/PROGRESS_LOG.md",
        "workspace/completed/poem/PROMPT.md",
        "workspace/completed/poem/STEPS.json",
        "workspace/completed/poem/data/in.csv",
        "workspace/completed/poem/work.sh",
        "workspace/needs-you.md",
    ]
    assert found.left_out == [
        f"{bundle / 'huge.bin'}: {kept.MAX_BYTES + 1} bytes, over {kept.MAX_BYTES}"
    ]


def test_a_bundle_of_many_files_is_kept_up_to_its_count(tmp_path):
    home = Home(tmp_path)
    bundle = home.ondeck / "many"
    bundle.mkdir(parents=True)
    for i in range(kept.MAX_FILES + 3):
        (bundle / f"f{i:04d}.txt").write_text("x")
    found = kept.workspace(home)
    assert len(found.files) == kept.MAX_FILES
    assert len(found.left_out) == 3 and all("over" in why for why in found.left_out)

"""The daemon's git: a commit of exactly the paths it names, however many or however named."""

from __future__ import annotations

import subprocess

from executive import git


def tracked(root) -> list[str]:
    out = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True)
    return out.stdout.splitlines()


def test_names_that_look_like_options_or_globs_are_committed_as_written(tmp_path):
    git.init(tmp_path)
    names = ["-n.md", "a*.md", "[x].md", "ab.md"]
    for name in names[:3]:
        (tmp_path / name).write_text("x\n")
    (tmp_path / "ab.md").write_text("not named\n")  # what a glob "a*.md" would have taken
    assert git.commit(tmp_path, [tmp_path / n for n in names[:3]], "three")
    assert sorted(tracked(tmp_path)) == sorted(names[:3])


def test_more_paths_than_an_argument_list_holds_and_a_followed_folder_left(tmp_path):
    git.init(tmp_path)
    folder = tmp_path / "workspace"
    # Names ~3,000 characters long (a deep folder), 900 of them: past Linux's 2 MB for a
    # command line, with few files to write.
    deep = folder.joinpath(*["d" * 200] * 15)
    deep.mkdir(parents=True)
    paths = [deep / f"{i:03d}.md" for i in range(900)]
    for path in paths:
        path.write_text("")
    assert sum(len(str(p.relative_to(tmp_path))) for p in paths) > 2 * 1024 * 1024
    assert git.commit(tmp_path, paths, "many", follow=[folder])
    assert len(tracked(tmp_path)) == 900
    # Followed: what is no longer named leaves the index, and stays on disk.
    assert git.commit(tmp_path, paths[:10], "fewer", follow=[folder])
    assert len(tracked(tmp_path)) == 10 and paths[-1].exists()


def test_a_followed_folder_takes_changes_but_never_a_file_gitignore_leaves_out(tmp_path):
    git.init(tmp_path)
    folder = tmp_path / "workspace"
    folder.mkdir()
    (tmp_path / ".gitignore").write_text("*.csv\n")
    log, data = folder / "PROGRESS_LOG.md", folder / "data.csv"
    log.write_text("one\n")
    data.write_text("a,b\n")
    # Named but ignored: left untracked, as `git add workspace` leaves it, and the rest commits.
    assert git.commit(tmp_path, [tmp_path / ".gitignore", log, data], "first", follow=[folder])
    assert sorted(tracked(tmp_path)) == [".gitignore", "workspace/PROGRESS_LOG.md"]
    log.write_text("one\ntwo\n")
    assert git.commit(tmp_path, [log, data], "second", follow=[folder])
    shown = subprocess.run(
        ["git", "-C", str(tmp_path), "show", "HEAD:workspace/PROGRESS_LOG.md"],
        capture_output=True,
        text=True,
    )
    assert shown.stdout == "one\ntwo\n"
    assert not git.commit(tmp_path, [log, data], "nothing new", follow=[folder])

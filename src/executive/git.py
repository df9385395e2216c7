"""The few git operations the daemon needs, through the git CLI (no library, no push ever)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

# Who the daemon's commits are by, whatever the host's git configuration says.
_IDENTITY = ("-c", "user.name=executive", "-c", "user.email=executive@localhost")


class GitError(RuntimeError):
    pass


def available() -> bool:
    return shutil.which("git") is not None


def run(
    args: list[str], cwd: Path, *, check: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    if "push" in args:
        # Pillar: the daemon commits, it never publishes.
        raise GitError("executive never runs git push")
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        input=stdin,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(Path.home()),
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
        },
    )
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()}")
    return proc


def is_repo(path: Path) -> bool:
    """Whether ``path`` is the top of a repository of its own; being *inside* one does not
    count: a home made in a project's checkout (``make run``'s ``demo-home``) must get its own
    repository, never commit into the project's."""
    if not (path.is_dir() and available()):
        return False
    proc = run(["rev-parse", "--show-toplevel"], path, check=False)
    return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == path.resolve()


def commit_count(path: Path) -> int:
    """How many commits the repository at ``path`` has on its current branch (0: none yet)."""
    done = run(["rev-list", "--count", "HEAD"], path, check=False)
    return int(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else 0


def init(path: Path) -> None:
    run(["init", "-q", "-b", "main"], path)


def commit(path: Path, paths: list[Path], message: str, *, follow: Sequence[Path] = ()) -> bool:
    """Stage ``paths`` and commit them if anything changed; whether it committed. In each
    folder of ``follow`` the paths are files and the index then holds exactly them (but one
    ``.gitignore`` leaves out, as ``git add`` would): a tracked file that is gone, or no longer
    among them, leaves the index (a bundle moved on)."""
    existing = [str(p.relative_to(path)) for p in paths if p.exists()]
    folders = [str(folder.relative_to(path)) for folder in follow]  # each below ``path``
    under = tuple(f"{folder}/" for folder in folders)
    inside = {name for name in existing if name.startswith(under)}
    if added := [name for name in existing if name not in inside]:
        run(["--literal-pathspecs", "add", *_FROM_STDIN], path, stdin="\0".join(added))
    if folders:
        _follow(path, folders, inside)
    if run(["diff", "--cached", "--quiet"], path, check=False).returncode == 0:
        return False
    run([*_IDENTITY, "commit", "-q", "-m", message], path)
    return True


# Names reach git on stdin: a workspace of thousands of bundles would pass the argument
# list's limit, and a name is never read as an option (nor, literal, as a glob).
_FROM_STDIN = ("--pathspec-from-file=-", "--pathspec-file-nul")


def _follow(cwd: Path, folders: list[str], files: set[str]) -> None:
    """The index under ``folders`` made ``files``, less the untracked ones ``.gitignore``
    leaves out. By ``update-index``, whose work grows with the files: ``git add`` matches
    every path against every pathspec (1.5 s a commit at 2,000 bundles, 4.4 s at 4,000)."""
    ignored = _listed(cwd, ["--others", "--ignored", "--exclude-standard"], folders)
    _update_index(cwd, ["--add", "--remove", "--replace"], files - ignored)
    _update_index(cwd, ["--force-remove"], _listed(cwd, [], folders) - files)


def _listed(cwd: Path, options: list[str], folders: list[str]) -> set[str]:
    listed = run(["--literal-pathspecs", "ls-files", "-z", *options, "--", *folders], cwd)
    return {name for name in listed.stdout.split("\0") if name}


def _update_index(cwd: Path, options: list[str], names: set[str]) -> None:
    if names:
        run(["update-index", *options, "-z", "--stdin"], cwd, stdin="\0".join(sorted(names)))

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
    folder of ``follow`` the index then holds exactly the ``paths`` under it: a tracked file
    that is gone, or no longer among them, leaves the index (a bundle moved on)."""
    existing = [str(p.relative_to(path)) for p in paths if p.exists()]
    if existing:
        _each(["add"], existing, path)
    kept = set(existing)
    for folder in follow:
        listed = run(["ls-files", "-z", "--", str(folder.relative_to(path))], path).stdout
        gone = [name for name in listed.split("\0") if name and name not in kept]
        if gone:
            _each(["rm", "--cached", "-q", "--ignore-unmatch"], gone, path)
    if run(["diff", "--cached", "--quiet"], path, check=False).returncode == 0:
        return False
    run([*_IDENTITY, "commit", "-q", "-m", message], path)
    return True


def _each(command: list[str], names: list[str], cwd: Path) -> None:
    """``git <command>`` on ``names``, given on stdin: a workspace of thousands of bundles
    would pass the argument list's limit, and a name is never read as an option or a glob."""
    run(
        ["--literal-pathspecs", *command, "--pathspec-from-file=-", "--pathspec-file-nul"],
        cwd,
        stdin="\0".join(names),
    )

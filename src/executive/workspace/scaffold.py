"""``executive init``: a new agent home, ready for ``executive doctor`` and ``executive run``."""

from __future__ import annotations

import secrets
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from executive import git
from executive.envfile import render_env
from executive.home import Home
from executive.hookspecs import SPECS
from executive.workspace.operator import places

# The original's go-live state: master on, each hook as its declaration says (B to E on, A
# off: audit only, it costs retrievals).
GO_LIVE = {
    "V3_MEMORY_ENABLED": "true",
    **{spec.flag: "true" if spec.go_live else "false" for spec in SPECS.values()},
}

# Only a demo home gets work queued: a real home starts empty, and nothing runs that the
# operator did not queue.
_DEMO_BUNDLES = ("demo-greeting", "demo-flaky-fetch", "hello-world")


@dataclass
class Scaffolded:
    home: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def _templates() -> resources.abc.Traversable:
    return resources.files("executive.workspace") / "templates"


class ForeignRepository(Exception):
    """The folder is a repository with a history of its own; the message says why that
    matters and what to do."""


def scaffold(root: Path, *, demo: bool = False, force: bool = False) -> Scaffolded:
    """Create (or complete) an agent home, mode 0700, never overwriting a file. A repository
    with commits that is no agent home yet (a code repository, say) is refused unless ``force``:
    the home's folders and every outcome after would go into its history, the folder made 0700."""
    root = root.expanduser().resolve()
    if not force and Home(root).not_a_home() is not None and git.is_repo(root):
        count = git.commit_count(root)
        if count:
            raise ForeignRepository(
                f"{root} is a git repository with {count} commit(s) of its own: init would "
                "commit the agent's folders into its history (and every outcome after), and "
                "make the folder private (mode 0700). Make the home in a new folder, or give "
                "--force to make this repository an agent home"
            )
    root.mkdir(parents=True, exist_ok=True)
    # Private: ledgers and memory texts are the executive's, never a worker account's to
    # read (user mode runs workers as another account; doctor fails if it can reach in).
    root.chmod(0o700)
    home = Home(root)
    result = Scaffolded(root)
    if not git.is_repo(root):
        git.init(root)
        result.created.append(".git")
    home.ensure()

    values = {"V3_MEM0_USER_ID": f"agent-{secrets.token_hex(4)}"}
    if demo:
        # The demo runs shell-script workers and shows memory working end to end.
        values |= GO_LIVE | {
            "WORKER_VENDOR": "command",
            "IDLE_SLEEP_SECONDS": "10",
            # A retrospective (and Hook E) after the demo's handful of outcomes.
            "EXECUTIVE_RETRO_AFTER_OUTCOMES": "4",
            # The flaky fetch recovers within the first minute instead of after 30 s of backoff.
            "EXECUTIVE_RETRY_BACKOFF_SECONDS": "5",
        }
    _write_new(result, home.env_file, render_env(values), mode=0o600)
    _write_new(result, root / ".gitignore", _read("gitignore"))
    _write_new(result, home.constitution, _read("constitution.md"))
    _write_new(result, home.needs_you, _read("needs-you.md"))
    for name in _DEMO_BUNDLES if demo else ():
        _copy_bundle(result, name, home.ondeck / name)
    for folder in home.layout():
        if not folder.is_relative_to(home.state) and not any(folder.iterdir()):
            (folder / ".gitkeep").touch()
    git.commit(root, [root], "chore(executive): scaffold agent home")
    return result


def _read(name: str) -> str:
    return (_templates() / name).read_text()


def _write_new(result: Scaffolded, path: Path, text: str, *, mode: int = 0o644) -> None:
    rel = str(path.relative_to(result.home))
    if path.exists():
        result.kept.append(rel)
        return
    path.write_text(text)
    path.chmod(mode)
    result.created.append(rel)


def _copy_bundle(result: Scaffolded, name: str, target: Path) -> None:
    rel = str(target.relative_to(result.home))
    if target.exists() or any((root / name).exists() for _, root in places(Home(result.home))):
        result.kept.append(rel)
        return
    source = _templates() / "bundles" / name
    with resources.as_file(source) as folder:
        shutil.copytree(folder, target)
    result.created.append(rel)

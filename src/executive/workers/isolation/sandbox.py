"""Where a worker or verifier runs: a bubblewrap sandbox, a separate account, or nothing.

A worker is an LLM with a shell or any command a bundle names, so it is treated as hostile:

- ``sandbox`` (bubblewrap): the output folder is the only writable place; the agent home,
  its ``.state/``, the control socket's folder, the outputs root (every other bundle's
  folder), the peer homes and ``EXECUTIVE_SANDBOX_HIDE`` are hidden behind empty tmpfs
  mounts the worker cannot write (mode 0555: a writable one was memory it could fill
  without bound), and the bundle's own folders are bound back; ``/tmp`` and ``/dev/shm`` are
  private tmpfs of the file size limit's size, ``/dev`` is read-only; its own user,
  pid, ipc, uts and network namespaces (so the whole tree dies with it, its processes never
  see ours and nothing listening on this host is reachable); every capability dropped
  (required when the daemon is root, where bwrap would otherwise keep them all). Its one way
  out is the run's egress route (:mod:`executive.workers.egress.route`), when the network is on.
- ``user``: run as a separate unprivileged account (hosts without user namespaces). The
  home must not be readable by that account; the socket (0600 in a 0700 folder) is not.
- ``none``: the daemon's own user, beside its files. Documented as unsafe; doctor warns.

``auto`` picks ``sandbox`` where a real bwrap probe succeeds, then ``user`` when the daemon
is root and the worker account exists, then ``none``. Sysctls are only hints, so the
probe runs bwrap itself (verified on this machine: see the team's sandboxing notes).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from executive.home import Home
from executive.settings import Settings
from executive.workers.isolation import launcher
from executive.workers.isolation.limits import PROBE_TIMEOUT_SECONDS, Limits, tmpfs_size_supported

if TYPE_CHECKING:
    from executive.workers.egress.route import Route

Mode = Literal["sandbox", "user", "none"]
Forward = tuple[str, int, str, bool]  # listen host, port, Unix socket inside, required
Requested = Literal["auto", "sandbox", "user", "none"]
# The order a path is searched for in the worker: plain system folders only.
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"


# The launcher runs as its file: ``ps`` shows ``python3 -I -S …/workers/isolation/launcher.py {spec}``
# and the worker's command after it, not the module's text (``-I -S``: no site-packages, so
# ``-m executive.workers.isolation.launcher`` would not import; the file imports the standard library only).
LAUNCHER_FILE = Path(launcher.__file__).resolve()
# Unix sockets are filtered where the launcher knows the machine's system calls.
CONFINED = os.uname().machine in launcher.CONFINABLE


class IsolationUnavailable(RuntimeError):
    """The requested isolation cannot run here; the message says why and what to do."""


@dataclass(frozen=True)
class Isolation:
    mode: Mode
    reason: str
    network: bool = True
    hidden: tuple[Path, ...] = ()  # folders the worker must not see (see from_settings)
    writable: tuple[Path, ...] = ()  # extra writable folders the operator allowed
    bwrap: str | None = None
    account: str | None = None  # the worker account in ``user`` mode
    ids: tuple[int, int] | None = field(default=None, compare=False)
    launcher: str | None = None  # the Python that runs launcher.py inside (sandbox mode)
    # One run's way out of the sandbox (the egress proxy); None: no network at all.
    route: Route | None = field(default=None, compare=False)
    limits: Limits = field(default_factory=Limits)  # what the tree may use (isolation.limits)

    def wrap(
        self, argv: Sequence[str], *, workdir: Path, readonly: Sequence[Path] = ()
    ) -> list[str]:
        """The argv that runs ``argv`` inside this isolation (unchanged outside ``sandbox``)."""
        if self.mode != "sandbox":
            return list(argv)
        assert self.bwrap is not None and self.launcher is not None
        forwards = self.route.forwards() if self.route is not None else []
        inner = launch(self.launcher, argv, forwards)
        shown = [*readonly, *launcher_hidden(self.hidden)]
        mounts = mount_args(self, workdir=workdir, readonly=shown)
        return [self.bwrap, *namespace_args(), *mounts, "--", *inner]


def launch(python: str, argv: Sequence[str], forwards: Sequence[Forward] = ()) -> list[str]:
    """``argv`` behind the launcher: the run's ports, the confinement, then ``argv`` (exec)."""
    spec = {"forwards": list(forwards), "confine": CONFINED}
    return [python, "-I", "-S", str(LAUNCHER_FILE), json.dumps(spec), *argv]


def launcher_hidden(hidden: Sequence[Path]) -> list[Path]:
    """The launcher's file, to be bound back read-only where the sandbox hides its folder
    (a checkout under /tmp, or under a folder the operator hides); else nothing."""
    covered = any(LAUNCHER_FILE.is_relative_to(folder) for folder in (*hidden, *PRIVATE))
    return [LAUNCHER_FILE] if covered else []


def interpreter(hidden: Sequence[Path]) -> str | None:
    """A Python the sandbox can run: the daemon's own (its real file), or the system's."""
    for candidate in (sys.executable, shutil.which("python3", path="/usr/local/bin:/usr/bin")):
        if not candidate:
            continue
        real = Path(os.path.realpath(candidate))
        covered = any(real.is_relative_to(h) for h in (*hidden, *PRIVATE))
        if real.is_file() and os.access(real, os.X_OK) and not covered:
            return str(real)
    return None


# The sandbox's own: a program the host keeps under them is not there for the worker.
PRIVATE = (Path("/tmp"), Path("/dev/shm"))


def program_hidden(argv: Sequence[str]) -> list[Path]:
    """The program ``argv`` runs, when the host keeps it where the sandbox has folders of its
    own (``/tmp``, ``/dev/shm``): a checkout there keeps the bundled Claude Code CLI in its
    venv. To be bound back read-only at the path it is given (bwrap follows a link to its
    file), that one file; without it the program is "No such file" (exit 127). Only for a
    program the daemon chose (the claude CLI): a bundle's own command names what it likes,
    and a host file under /tmp is not the worker's to read."""
    found = shutil.which(argv[0]) if argv else None
    if found is None:
        return []
    given = Path(found).absolute()  # a venv's python is a link: where it is, where it leads
    paths = dict.fromkeys((given, given.resolve()))
    return [p for p in paths if any(p.is_relative_to(private) for private in PRIVATE)]


def namespace_args() -> list[str]:
    args = ["--die-with-parent", "--new-session"]  # PDEATHSIG; setsid against TIOCSTI
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]  # as root bwrap keeps every capability otherwise
    args += ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    # Always its own network: this host's loopback (the dashboard, a database) and its
    # abstract Unix sockets (a network-namespace thing) stay out; the way out is the route.
    args += ["--unshare-net", "--unshare-cgroup-try"]
    return args


def mount_args(iso: Isolation, *, workdir: Path, readonly: Sequence[Path] = ()) -> list[str]:
    """Mounts apply in order and later ones cover earlier ones: hide, then bind back."""
    sized = []
    if iso.limits.file_max_bytes and iso.bwrap and tmpfs_size_supported(iso.bwrap):
        sized = ["--size", str(iso.limits.file_max_bytes)]  # a tmpfs is memory: bounded too
    # /dev is a tmpfs as well: read-only (its devices still work), with a /dev/shm like /tmp.
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--remount-ro", "/dev"]
    args += [*sized, "--tmpfs", "/dev/shm", "--proc", "/proc", *sized, "--tmpfs", "/tmp"]
    tmp = Path("/tmp")
    # Read-only to the worker: a hiding tmpfs it could write is memory without a bound.
    sealed = ["--perms", "0555"] if iso.bwrap and sealed_tmpfs(iso.bwrap) else []
    for folder in iso.hidden:
        # Under /tmp or under another hidden folder it is already gone (hiding it again
        # would leave an empty mount point to see); a missing path would stop bwrap.
        covered = any(folder != o and folder.is_relative_to(o) for o in iso.hidden)
        if folder.is_dir() and not covered and not folder.is_relative_to(tmp):
            args += [*sealed, "--tmpfs", str(folder)]
    if iso.route is not None:
        args += iso.route.bind_args()
    for path in readonly:
        args += ["--ro-bind", str(path), str(path)]
    for path in iso.writable:
        if path.exists():
            args += ["--bind", str(path), str(path)]
    args += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    return args


@functools.cache
def _probe(bwrap: str, *args: str) -> str | None:
    """None when bwrap runs with our namespaces and ``args`` here; otherwise why not."""
    try:
        done = subprocess.run(
            [bwrap, *namespace_args(), *args],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not run: {exc}"
    if done.returncode != 0:
        return (done.stderr.strip() or f"exit {done.returncode}")[-500:]
    return None


def sealed_tmpfs(bwrap: str) -> bool:
    """Whether this bwrap takes ``--perms`` for a tmpfs (0.8 does; older ones refuse it)."""
    mounts = ("--ro-bind", "/", "/", "--perms", "0555", "--tmpfs", "/mnt")
    return _probe(bwrap, *mounts, "--", "/bin/true") is None


def _ready(bwrap: str, hidden: Sequence[Path]) -> tuple[str | None, str]:
    """(the launcher's Python, "") when a sandbox can run here, else (None, why not)."""
    mounts = ("--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--")
    failure = _probe(bwrap, *mounts, "/bin/true")
    if failure is not None:
        return None, f"bubblewrap cannot create namespaces here: {failure}"
    python = interpreter(hidden)
    if python is None:
        return None, f"no Python the sandbox can see for its launcher ({sys.executable} is hidden)"
    failure = _probe(bwrap, *mounts, *launch(python, ["/bin/true"]))
    if failure is not None:
        return None, f"the sandbox's launcher cannot run: {failure}"
    return python, ""


def account_ids(name: str) -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def choose(
    requested: Requested,
    *,
    account: str = "nobody",
    network: bool = True,
    hidden: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    bwrap: str | None = None,
    workdir: Path | None = None,
) -> Isolation:
    """The isolation to run workers in, with the reason; raises when a required mode cannot run.

    ``workdir`` is where the workers' folders live: ``user`` needs the account to reach it.
    """
    found = bwrap or shutil.which("bwrap")
    common = {"network": network, "hidden": tuple(hidden), "writable": tuple(writable)}
    why_not_sandbox = "bwrap is not installed (apt-get install bubblewrap)"
    if found is not None and requested in ("auto", "sandbox"):
        python, why_not_sandbox = _ready(found, hidden)
        if python is not None:
            reason = f"bubblewrap works ({found})"
            return Isolation("sandbox", reason, bwrap=found, launcher=python, **common)
    if requested == "sandbox":
        raise IsolationUnavailable(f"worker isolation 'sandbox' is unavailable: {why_not_sandbox}")
    ids = account_ids(account)
    why_not_user = (
        f"no account {account!r}"
        if ids is None
        else "the daemon is not root, so it cannot switch to the worker account"
        if os.geteuid() != 0
        else f"account {account!r} is uid 0"
        if ids[0] == 0
        else f"account {account!r} cannot reach {workdir}"
        if workdir is not None and not reachable(workdir, *ids)
        else None
    )
    if requested in ("auto", "user") and why_not_user is None:
        reason = f"workers run as {account!r}"
        if requested == "auto":
            reason += f" ({why_not_sandbox})"
        return Isolation("user", reason, account=account, ids=ids, **common)
    if requested == "user":
        raise IsolationUnavailable(f"worker isolation 'user' is unavailable: {why_not_user}")
    if requested == "none":
        return Isolation("none", "EXECUTIVE_WORKER_ISOLATION=none (unsafe)", **common)
    return Isolation(
        "none", f"no isolation is available: {why_not_sandbox}; {why_not_user} (unsafe)", **common
    )


def reachable(folder: Path, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` may pass through every existing folder down to ``folder``."""
    for part in [*reversed(folder.parents), folder]:
        try:
            info = part.stat()
        except FileNotFoundError:
            break  # the daemon makes the rest
        except OSError:
            return False
        bit = (
            stat.S_IXUSR
            if info.st_uid == uid
            else stat.S_IXGRP
            if info.st_gid == gid
            else stat.S_IXOTH
        )
        if not info.st_mode & bit:
            return False
    return True


def from_settings(settings: Settings) -> Isolation:
    """The isolation the settings ask for, hiding what the module's notes list."""
    home = Home(settings.home)
    hidden = [home.root, home.state, home.socket.parent, settings.outputs]
    hidden += [*settings.peer_home_list, *_paths(settings.sandbox_hide)]
    chosen = choose(
        settings.worker_isolation,
        account=settings.worker_user,
        network=settings.worker_network,
        hidden=list(dict.fromkeys(hidden)),
        writable=_paths(settings.sandbox_writable),
        workdir=settings.outputs,
    )
    limits = Limits(
        max_processes=settings.worker_max_processes,
        file_max_bytes=settings.worker_file_max_bytes,
        log_max_bytes=settings.worker_log_max_bytes,
    )
    return dataclasses.replace(chosen, limits=limits)


def _paths(value: str) -> list[Path]:
    return [Path(p.strip()).expanduser() for p in value.split(",") if p.strip()]

"""Attack 7 and its variants against the real CLI and daemon: the socket's folder.

The socket used to fall back to ``/tmp/executive-<uid>`` for a deep home, where a planted
symlink was followed and its target chmod-ed. Now it always lives in the home's ``.state/``,
which must be a real folder of ours; a deep home reaches it through a held folder fd.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import tempfile
from pathlib import Path

from tests.conftest import run_cli
from tests.daemonproc import Daemon
from tests.loop.homes import make_home


def test_a_planted_state_link_stops_the_daemon_and_its_target_is_untouched(tmp_path):
    home = make_home(tmp_path)
    target = tmp_path / "target"
    target.mkdir()
    target.chmod(0o755)
    for child in (home / ".state").iterdir():
        child.rmdir() if child.is_dir() else child.unlink()
    (home / ".state").rmdir()
    (home / ".state").symlink_to(target)
    result = run_cli("--home", str(home), "run", "--once")
    assert result.returncode != 0
    assert "is not a plain folder" in result.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o755 and list(target.iterdir()) == []


def test_a_deep_home_is_served_through_its_own_state_folder(tmp_path):
    deep = tmp_path.joinpath(*["a-long-folder-name-for-the-home"] * 4)
    deep.mkdir(parents=True)
    home = make_home(deep)
    sock = home / ".state" / "executive.sock"
    assert len(os.fsencode(sock)) > 108
    daemon = Daemon(home, {"V3_MEMORY_ENABLED": "false"})
    try:
        daemon.wait_for("control.listening", timeout=120)
        assert stat.S_ISSOCK(sock.lstat().st_mode)
        listed = run_cli("--home", str(home), "mem", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout)["count"] == 0
        assert [r for r in daemon.records if r.get("event") == "control.failed"] == []
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(60) == 0
    finally:
        daemon.kill()
    # Nothing was put where the old fallback lived (a shared runtime folder).
    digest = hashlib.sha256(os.fsencode(home)).hexdigest()[:16]
    runtime = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    assert not (runtime / f"executive-{os.getuid()}" / f"{digest}.sock").exists()

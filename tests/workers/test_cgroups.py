"""Where a run's cgroup can go, read from /proc, and a real one where this host allows it."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from executive.workers import cgroups

# This machine's layout (a hybrid: v1 controllers, an empty v2 tree) and a plain v2 host's.
HYBRID_CGROUP = "8:pids:/\n4:memory:/api/79ea\n1:cpu:/\n0::/\n"
HYBRID_MOUNTS = (
    "30 25 0:26 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
    "38 25 0:34 / /sys/fs/cgroup/pids rw,relatime shared:17 - cgroup cgroup rw,pids\n"
    "39 25 0:35 / /sys/fs/cgroup/memory rw,relatime shared:18 - cgroup cgroup rw,memory\n"
)
V2_CGROUP = "0::/system.slice/executive.service\n"
V2_MOUNTS = "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"


def test_the_daemons_cgroups_and_their_folders_are_read_from_proc():
    assert cgroups.memberships(HYBRID_CGROUP) == {
        "pids": "/",
        "memory": "/api/79ea",
        "cpu": "/",
        "": "/",
    }
    assert cgroups.mounts(HYBRID_MOUNTS) == {
        "": ("/sys/fs/cgroup/unified", "/"),
        "pids": ("/sys/fs/cgroup/pids", "/"),
    }
    v2 = cgroups.mounts(V2_MOUNTS)[""]
    assert cgroups._folder(v2, "/system.slice/executive.service") == Path(
        "/sys/fs/cgroup/system.slice/executive.service"
    )
    # A container's cgroup mount shows a sub-tree: paths outside it have no folder here.
    inner = ("/sys/fs/cgroup", "/docker/abc")
    assert cgroups._folder(inner, "/docker/abc/run") == Path("/sys/fs/cgroup/run")
    assert cgroups._folder(inner, "/elsewhere") is None


HIERARCHY, WHY = cgroups.locate()


@pytest.mark.skipif(HIERARCHY is None, reason=f"no cgroup for runs here: {WHY}")
def test_a_run_cgroup_holds_what_is_put_in_it_limits_it_and_goes_away(tmp_path):
    assert HIERARCHY is not None
    owner = cgroups.owner_key(tmp_path)
    group = cgroups.create(HIERARCHY, 16, owner)
    assert (group / "pids.max").read_text().strip() == "16"
    child = subprocess.Popen(["sleep", "60"])
    try:
        cgroups.place(group, child.pid)
        assert cgroups.members(group) == [child.pid]
        # Found again, as a leftover of this daemon, by its own home only.
        assert cgroups.leftovers(HIERARCHY, owner) == [group]
        assert cgroups.leftovers(HIERARCHY, cgroups.owner_key(tmp_path / "other")) == []
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    cgroups.remove(group)
    assert not group.exists()

"""Which limits a worker gets in each mode, and what doctor says about them."""

from __future__ import annotations

import os
from pathlib import Path

from executive.workers.cgroups import Hierarchy
from executive.workers.limits import Limits

BASE = Path("/sys/fs/cgroup/pids/executive")


def test_a_cgroup_counts_the_run_alone_so_rlimit_nproc_is_left_out():
    limits = Limits(64, 1 << 20, Hierarchy(1, BASE.parent, BASE))
    for mode in ("sandbox", "user", "none"):
        assert limits.rlimits(mode) == {"RLIMIT_FSIZE": 1 << 20}
        holds, how = limits.process_limit(mode)
        assert holds and how.startswith("pids.max=64 in a cgroup per run (cgroup v1")


def test_without_a_cgroup_rlimit_nproc_is_set_where_it_binds_and_doctor_says_so():
    limits = Limits(64, 1 << 20, None, "EXECUTIVE_WORKER_CGROUPS=false")
    assert limits.rlimits("user") == {"RLIMIT_FSIZE": 1 << 20, "RLIMIT_NPROC": 64}
    assert limits.process_limit("user") == (
        True,
        "RLIMIT_NPROC=64 (the worker account's processes and threads)",
    )
    # The daemon's user would count all of its own processes: not set, and said.
    assert "RLIMIT_NPROC" not in limits.rlimits("none")
    holds, why = limits.process_limit("none")
    assert not holds and why.endswith("(EXECUTIVE_WORKER_CGROUPS=false)")
    # A root daemon's sandbox maps to root, which the kernel never counts against it.
    assert limits.process_limit("sandbox")[0] == (os.geteuid() != 0)
    assert "not limited" in limits.write_limit("none") and "/tmp" in limits.write_limit("sandbox")

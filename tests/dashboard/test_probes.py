"""/metrics and /healthz of a real daemon, and secrets that must never be shown."""

from __future__ import annotations

import os
import platform
import re
import signal
import socket
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests import promql
from tests.conftest import run_cli, set_env
from tests.daemonproc import Daemon
from tests.dashboard.browser import chromium, console_errors
from tests.dashboard.conftest import ENV_SECRET, FILE_SECRET, start, stop
from tests.loop.homes import add_bundle, make_home, outputs

PAGES = ["/", "/bundles", "/hooks", "/packs", "/memory", "/metrics", "/healthz"]


def samples(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def value(families: dict[str, list], name: str, **labels: str) -> float:
    family, _, suffix = name.partition(":")
    return sum(
        s.value
        for s in families[family]
        if s.name == family + suffix and all(s.labels.get(k) == v for k, v in labels.items())
    )


@pytest.mark.store  # the demo daemon opens the embedded store
def test_metrics_parse_with_the_prometheus_parser(demo):
    response = demo.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    m = samples(response.text)
    # At least one iteration per worker run (8 below); how many idle ones besides depends
    # on the machine's speed, so they are not counted.
    assert value(m, "executive_iterations:_total") >= 8
    assert value(m, "executive_hook_runs:_total", hook="failure-diagnosis") >= 1
    assert value(m, "executive_hook_runs:_total", hook="pre-work-selection", outcome="skipped") >= 1
    assert value(m, "executive_hook_duration_seconds:_count", hook="pre-spawn-pack") >= 6
    inf = value(m, "executive_hook_duration_seconds:_bucket", hook="pre-spawn-pack", le="+Inf")
    assert inf == value(m, "executive_hook_duration_seconds:_count", hook="pre-spawn-pack")
    assert value(m, "executive_pack_tokens:_count") >= 6
    assert value(m, "executive_pack_entries:_sum") > 0
    assert value(m, "executive_store_writes:_total", result="succeeded") > 0
    assert value(m, "executive_worker_runs:_total", outcome="passed") == 4
    assert value(m, "executive_worker_runs:_total", outcome="failed") == 4  # 1 flaky + 3
    assert value(m, "executive_pending_writes") == 0
    assert value(m, "executive_memories", type="principle") > 0
    assert value(m, "executive_memories", type="episodic") > 0


@pytest.mark.store  # the demo daemon opens the embedded store
def test_healthz_answers_for_loop_and_store(demo):
    body = _poll(demo, lambda r: r.status_code == 200).json()
    assert body["status"] == "ok"
    assert body["store"].startswith("answers (")


@pytest.mark.store  # the demo daemon opens the embedded store
def test_no_secret_in_any_page_metric_or_health_answer(demo):
    # Every page, the pages they link to (packs, memories), a search, and the probes.
    bodies = {path: demo.get(path).text for path in PAGES}
    bodies["search"] = demo.get("/memory", params={"q": "Why did the mirror refuse us?"}).text
    for path in [p for p in _links(bodies["/packs"] + bodies["/memory"]) if p != "/packs"]:
        bodies[path] = demo.get(path).text
    assert len(bodies) > len(PAGES) + 3
    assert "mirror refused credentials [REDACTED]" in bodies["/bundles"]  # it had the occasion
    for path, body in bodies.items():
        assert ENV_SECRET not in body, path
        assert FILE_SECRET not in body, path
        assert ENV_SECRET[4:20] not in body and FILE_SECRET[3:20] not in body, path


def _links(html: str) -> list[str]:
    return sorted(set(re.findall(r'href="(/(?:packs|memory)/[^"]+)"', html)))[:40]


@pytest.mark.store  # the demo daemon opens the embedded store
def test_only_get_and_head_every_route_is_read_only(demo):
    for path in PAGES:
        assert httpx.post(demo.url.rstrip("/") + path, timeout=30).status_code == 405, path
        assert httpx.delete(demo.url.rstrip("/") + path, timeout=30).status_code == 405, path


def test_healthz_turns_503_while_the_loop_is_stalled(tmp_path):
    # A worker that waits on a FIFO holds the iteration until the test writes to it. The
    # health bound of one iteration (global worker limit + hook limits + two intervals) is
    # made short; this bundle's own limit is long, so the loop is stuck past the bound.
    home = make_home(tmp_path, WORKER_TIMEOUT_MS="1", EXECUTIVE_HOOK_TIMEOUT_SECONDS="0.1")
    # In the worker's output folder: the one place a sandboxed worker shares with the test.
    out = outputs(home) / "stuck"
    out.mkdir(parents=True)
    fifo = out / "release"
    os.mkfifo(fifo)
    add_bundle(home, "stuck", "cat release > /dev/null\n", timeout_seconds=600)
    served = start(home)
    try:
        served.daemon.wait_for("step.started", timeout=60)
        answer = _poll(served, lambda r: r.status_code == 503)
        body = answer.json()
        assert body["status"] == "unhealthy"
        assert body["loop"].startswith("stalled: iteration")
        with fifo.open("w") as release:
            release.write("go\n")
        served.daemon.wait_for("goal.completed", timeout=60)
        assert _poll(served, lambda r: r.status_code == 200).json()["status"] == "ok"
    finally:
        stop(served)


def _poll(served, done, headers=None, attempts: int = 400) -> httpx.Response:
    """Ask until ``done``: bounded by count; each answer is a fresh look at the loop."""
    for _ in range(attempts):
        response = served.get("/healthz", headers=headers or {})
        if done(response):
            return response
        time.sleep(0.05)
    raise AssertionError(f"healthz never changed: {response.status_code} {response.text}")


def test_a_token_guards_every_route_and_is_never_shown(tmp_path):
    token = "dash-token-9f8e7d6c5b4a3210"
    home = make_home(tmp_path)
    set_env(home, EXECUTIVE_DASHBOARD_TOKEN=token)
    served = start(home)
    try:
        for path in PAGES:
            assert served.get(path).status_code == 401, path
            assert served.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
        authorised = {"Authorization": f"Bearer {token}"}
        _poll(served, lambda r: r.status_code == 200, authorised)  # the loop has ticked
        for path in PAGES:
            response = served.get(path, headers=authorised)
            assert response.status_code == 200, path
            assert token not in response.text, path
        # A browser passes it once in the query; a same-site, HTTP-only cookie carries it on.
        first = served.get("/", params={"token": token})
        assert first.status_code == 200
        cookie = first.cookies.get("executive_dashboard_token")
        assert cookie == token and "httponly" in first.headers["set-cookie"].lower()
        assert (
            served.get("/bundles", cookies={"executive_dashboard_token": token}).status_code == 200
        )
        # And in a real browser: the token once in the address, then plain links.
        with chromium(tmp_path / "profile") as browser:
            browser.get(served.url + f"?token={token}")
            browser.find_element(By.LINK_TEXT, "Bundles").click()
            WebDriverWait(browser, 30).until(lambda b: b.current_url.endswith("/bundles"))
            assert browser.find_element(By.TAG_NAME, "h1").text == "Bundles"
            assert token not in browser.page_source
            browser.save_screenshot(str(tmp_path / "bundles-with-token.png"))
            assert console_errors(browser) == []
    finally:
        stop(served)


@pytest.mark.parametrize("bind", ["0.0.0.0:0", "[::]:0", "example.org:8377"])
def test_a_non_loopback_bind_without_a_token_refuses_to_start(tmp_path, bind):
    home = make_home(tmp_path)
    result = run_cli(
        "--home",
        str(home),
        "run",
        env={"EXECUTIVE_DASHBOARD": "true", "EXECUTIVE_DASHBOARD_BIND": bind},
    )
    assert result.returncode != 0
    assert "EXECUTIVE_DASHBOARD_TOKEN" in result.stderr + result.stdout
    assert not (home / ".state" / "status.json").exists()


def test_a_taken_port_leaves_the_loop_running(tmp_path):
    # Two daemons on one machine must not crash each other: the second one runs blind.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        home = make_home(tmp_path)
        add_bundle(home, "still-works", "echo done\n")
        daemon = Daemon(
            home, {"EXECUTIVE_DASHBOARD": "true", "EXECUTIVE_DASHBOARD_BIND": f"127.0.0.1:{port}"}
        )
        try:
            failed = daemon.wait_for("dashboard.failed")
            assert str(port) in failed["bind"]
            daemon.wait_for("goal.completed")
        finally:
            daemon.signal(signal.SIGTERM)
            assert daemon.wait(timeout=60) == 0
            daemon.kill()


def scraped(text: str, **target: str) -> dict[promql.Labels, float]:
    """A scrape as Prometheus stores it: each sample with the target's labels (job, instance)."""
    return {
        promql.labels_of({"__name__": s.name, **s.labels, **target}): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }


@pytest.mark.store  # the demo daemon opens the embedded store
def test_the_example_alert_rules_parse_and_name_only_metrics_the_daemon_exports(demo):
    import yaml

    from tests.conftest import REPO

    rules = yaml.safe_load((REPO / "deploy" / "prometheus-alerts.yml").read_text())
    [group] = rules["groups"]
    assert len(group["rules"]) >= 6
    exported = {
        s.name for f in text_string_to_metric_families(demo.get("/metrics").text) for s in f.samples
    }
    for rule in group["rules"]:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
        assert rule["alert"] and rule["annotations"]["summary"]
        # "up" is Prometheus' own series for each target.
        names = promql.names(promql.parse(rule["expr"])) - {"up"}
        assert names <= exported, (rule["alert"], names - exported)
    m = samples(demo.get("/metrics").text)
    assert value(m, "executive_bundles", state="blocked") >= 1
    assert value(m, "executive_failed_iterations_in_a_row") == 0
    assert value(m, "executive_build_info", python=platform.python_version()) == 1
    assert value(m, "process_resident_memory_bytes") > 10e6


@pytest.mark.store  # the demo daemon opens the embedded store
def test_every_alert_rule_on_a_real_daemons_metrics(demo):
    """The scrape of a daemon that finished its bundles, held for three hours: no rule fires
    but the queue's (only if bundles wait); its dashboard stops answering: ExecutiveDown."""
    from tests.test_prometheus_alerts import rules

    target = {"job": "executive", "instance": "demo:8765"}
    text = demo.get("/metrics").text
    m = samples(text)
    three_hours = 3 * 3600.0
    up = promql.labels_of({"__name__": "up", **target})
    healthy = promql.held({**scraped(text, **target), up: 1.0}, three_hours)
    fired = {
        name for name, rule in rules().items() if promql.firing(rule, healthy, three_hours, 60.0)
    }
    waiting = value(m, "executive_bundles", state="ondeck") > 0
    assert fired == ({"ExecutiveQueueNotMoving"} if waiting else set())
    assert value(m, "executive_seconds_without_progress") < 900

    down = [s for s in healthy if s.labels != up]
    down.append(promql.Series(up, [(t * 60.0, 1.0 if t < 160 else 0.0) for t in range(181)]))
    [alert] = promql.firing(rules()["ExecutiveDown"], down, three_hours, 60.0)
    assert dict(alert.labels) == {**target, "alertname": "ExecutiveDown", "severity": "page"}

"""deploy/prometheus-alerts.yml tested as rules: every rule fires on its condition and stays
quiet otherwise, with promtool when it is installed and always with the suite's evaluator
(tests/promql.py) on the same cases. tests/dashboard/test_probes.py evaluates them on a real
daemon's /metrics."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests import promql

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
RULES = DEPLOY / "prometheus-alerts.yml"
CASES = DEPLOY / "prometheus-alerts.test.yml"
PROMTOOL = shutil.which("promtool")


def rules() -> dict[str, dict]:
    [group] = yaml.safe_load(RULES.read_text())["groups"]
    return {rule["alert"]: rule for rule in group["rules"]}


def cases() -> dict:
    return yaml.safe_load(CASES.read_text())


def test_the_cases_load_this_rules_file_on_one_evaluation_interval():
    document = cases()
    assert document["rule_files"] == [RULES.name]
    assert promql.seconds(document["evaluation_interval"]) == 60


def test_every_rule_has_a_case_where_it_fires_and_one_where_it_stays_quiet():
    fires, quiet = set(), set()
    for case in cases()["tests"]:
        for check in case["alert_rule_test"]:
            (fires if check.get("exp_alerts") else quiet).add(check["alertname"])
    names = set(rules())
    assert names - fires == set(), "rules with no case where they fire"
    assert names - quiet == set(), "rules with no case where they stay quiet"
    assert (fires | quiet) - names == set(), "cases for rules the file does not hold"


@pytest.mark.parametrize("case", cases()["tests"], ids=lambda c: c["name"])
def test_each_case_passes_on_the_suites_evaluator(case):
    interval = promql.seconds(cases()["evaluation_interval"])
    assert promql.run_case(rules(), case, interval) == []


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian: prometheus)")
def test_each_case_passes_on_promtool():
    proc = subprocess.run(
        [PROMTOOL, "test", "rules", CASES.name],
        cwd=DEPLOY,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_promtool_checks_the_rules_file():
    if PROMTOOL is None:
        pytest.skip("promtool is not installed (Debian: prometheus)")
    proc = subprocess.run(
        [PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _case(name: str) -> dict:
    return next(c for c in cases()["tests"] if c["name"] == name)


def test_the_evaluator_finds_what_was_wrong_with_the_two_old_rules():
    """The rules before issue 40, on the same cases: the evaluator must tell them wrong."""
    old_stalled = {
        **rules()["ExecutiveLoopStalled"],
        "expr": "executive_seconds_since_last_iteration > 900",
    }
    run = promql.input_series(_case("a 45-minute worker run is not a stalled loop"))
    assert promql.firing(old_stalled, run, 45 * 60, 60), "the old rule paged during a worker run"

    old_queue = {
        **rules()["ExecutiveQueueNotMoving"],
        "expr": 'executive_bundles{state="ondeck"} > 0'
        " and increase(executive_worker_runs_total[1h]) == 0",
    }
    stuck = promql.input_series(_case("bundles wait and no worker runs"))
    assert promql.firing(old_queue, stuck, 2 * 3600, 60) == [], "labels differ: never fires"
    assert promql.firing(rules()["ExecutiveQueueNotMoving"], stuck, 2 * 3600, 60)


def test_the_evaluator_refuses_what_it_does_not_implement():
    for expr in (
        "rate(x[5m]) > bool 1",
        'x{job=~"e.*"} > 0',
        "histogram_quantile(0.9, x) > 1",
        "x > on(job) group_left y",
        "-x > 0",
    ):
        with pytest.raises(promql.Unsupported):
            promql.evaluate(promql.parse(expr), [], 0.0)


def test_arithmetic_and_comparisons_between_vectors_match_one_to_one():
    """What a ratio rule needs (a budget spent over its cap, say): ``a / b > 0.8``."""
    target = {"job": "executive", "instance": "agent:8765"}
    series = [
        promql.Series(promql.labels_of({"__name__": "spent", **target}), [(0.0, 9.0)]),
        promql.Series(promql.labels_of({"__name__": "cap", **target}), [(0.0, 10.0)]),
        promql.Series(
            promql.labels_of({"__name__": "spent", "job": "executive", "instance": "b"}),
            [(0.0, 1.0)],
        ),
    ]
    [ratio] = promql.evaluate(promql.parse("spent / cap > 0.8"), series, 60.0)
    assert ratio == promql.Sample(promql.labels_of(target), 0.9)
    assert promql.evaluate(promql.parse("spent > 0.95 * cap"), series, 60.0) == []
    [over] = promql.evaluate(promql.parse("spent >= on(instance) cap - 1"), series, 60.0)
    assert dict(over.labels)["__name__"] == "spent"
    mine = 'spent{instance="agent:8765"} / on(job) sum by (job) (cap)'
    [shared] = promql.evaluate(promql.parse(mine), series, 60.0)
    assert dict(shared.labels) == {"job": "executive"} and shared.value == 0.9
    with pytest.raises(promql.Unsupported, match="duplicate"):
        promql.evaluate(promql.parse("spent / on(job) sum by (job) (cap)"), series, 60.0)


def test_increase_extrapolates_as_prometheus_does():
    # A counter growing 1 a minute, sampled each minute: increase over 30m is 30, whether
    # the window starts on a sample or between two (promtool agrees on this file's cases).
    series = [
        promql.Series(promql.parse_series("c_total"), [(i * 60.0, float(i)) for i in range(61)])
    ]
    [at_sample] = promql.evaluate(promql.parse("increase(c_total[30m])"), series, 3600.0)
    assert at_sample.value == pytest.approx(30.0)
    [between] = promql.evaluate(promql.parse("increase(c_total[30m])"), series, 3630.0)
    assert between.value == pytest.approx(30.0 * 1830 / 1800, rel=0.05)

from __future__ import annotations

import json
from pathlib import Path

import pytest

from executive.hookspecs import SPECS
from executive.settings import SettingsError, load_settings, variable_names
from tests.conftest import run_cli


def write_env(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / ".env.executive").write_text(text)


def test_empty_values_fall_back_to_defaults(tmp_path, monkeypatch):
    write_env(
        tmp_path,
        "V3_MEM0_COHORT=\nV3_MEM0_TOP_K=\nV3_MEM0_ENV=\nV3_MEM0_USER_ID=\n"
        "IDLE_SLEEP_SECONDS=\nV3_MEM_HOOK_POST_RUN=\nEXECUTIVE_TIMEZONE=\n",
    )
    monkeypatch.setenv("V3_MEM0_CONFIDENCE_FLOOR", "")
    settings = load_settings(tmp_path)
    assert settings.cohort is None
    assert settings.top_k == 10
    assert settings.env == "prod"
    assert settings.user_id is None
    assert settings.idle_sleep_seconds == 30
    assert settings.hook_post_run is False
    assert settings.confidence_floor == 0.7
    assert settings.timezone == "UTC"


def test_every_variable_is_unset_when_empty(tmp_path, monkeypatch):
    # The whole class of the original's cohort bug: no variable may read "" as a value.
    for name in variable_names():
        monkeypatch.setenv(name, "")
    settings = load_settings(tmp_path)
    assert settings.home == tmp_path.resolve()
    assert settings.memory_enabled is None
    assert settings.mem0_api_key is None


@pytest.mark.parametrize("raw", ["true", "TRUE", "True", " true "])
def test_flags_read_true_in_any_case(tmp_path, monkeypatch, raw):
    monkeypatch.setenv("V3_MEMORY_ENABLED", raw)
    monkeypatch.setenv("V3_MEM_HOOK_PRE_SPAWN", raw)
    settings = load_settings(tmp_path)
    assert settings.hooks_master_on
    assert settings.flag("V3_MEM_HOOK_PRE_SPAWN")


@pytest.mark.parametrize("raw", ["false", "FALSE", "False"])
def test_flags_read_false_in_any_case(tmp_path, monkeypatch, raw):
    monkeypatch.setenv("V3_MEMORY_ENABLED", raw)
    settings = load_settings(tmp_path)
    assert settings.memory_enabled is False
    assert not settings.hooks_master_on
    assert not settings.surface_memory_on


def test_master_unset_is_off_for_hooks_and_on_for_the_surface(tmp_path):
    settings = load_settings(tmp_path)
    assert not settings.hooks_master_on
    assert settings.surface_memory_on


def test_the_memory_gates_give_their_reasons(tmp_path, monkeypatch):
    # The one decision every gate asks: the runner, status, the surface and its jobs.
    settings = load_settings(tmp_path)
    assert settings.hook_off("V3_MEM_HOOK_POST_RUN") == "V3_MEMORY_ENABLED off"
    assert settings.surface_off is None
    monkeypatch.setenv("V3_MEMORY_ENABLED", "true")
    monkeypatch.setenv("V3_MEM_HOOK_POST_RUN", "true")
    settings = load_settings(tmp_path)
    assert settings.hook_off("V3_MEM_HOOK_POST_RUN") is None
    assert settings.hook_off("V3_MEM_HOOK_PRE_WORK") == "V3_MEM_HOOK_PRE_WORK off"
    monkeypatch.setenv("V3_MEMORY_ENABLED", "false")
    assert load_settings(tmp_path).surface_off == "V3_MEMORY_ENABLED off"


def test_a_flag_is_read_by_its_variable_name(tmp_path, monkeypatch):
    monkeypatch.setenv("EXECUTIVE_SNAPSHOT_COMMIT", "false")  # the older of two names
    settings = load_settings(tmp_path)
    assert settings.flag("EXECUTIVE_GIT_COMMIT") is False
    assert settings.flag("EXECUTIVE_DASHBOARD") is True
    with pytest.raises(KeyError, match="not a true/false setting"):
        settings.flag("V3_MEM0_TOP_K")


def test_process_environment_wins_over_the_file(tmp_path, monkeypatch):
    write_env(tmp_path, "V3_MEM0_TOP_K=7\nV3_MEM0_ENV=dev\n")
    monkeypatch.setenv("V3_MEM0_TOP_K", "3")
    settings = load_settings(tmp_path)
    assert settings.top_k == 3
    assert settings.env == "dev"


def test_invalid_values_are_all_named_with_value_and_reason(tmp_path, monkeypatch):
    write_env(tmp_path, "V3_MEM0_TOP_K=lots\nV3_MEM_HOOK_POST_RUN=yes\n")
    monkeypatch.setenv("EXECUTIVE_TIMEZONE", "Mars/Olympus")
    monkeypatch.setenv("V3_MEM0_CONFIDENCE_FLOOR", "1.5")
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path)
    problems = {variable: (value, why) for variable, value, why in caught.value.problems}
    assert problems["V3_MEM0_TOP_K"][0] == "lots"
    assert "integer" in problems["V3_MEM0_TOP_K"][1]
    assert problems["V3_MEM_HOOK_POST_RUN"] == ("yes", "must be true or false")
    assert problems["EXECUTIVE_TIMEZONE"][0] == "Mars/Olympus"
    assert "1.5" in problems["V3_MEM0_CONFIDENCE_FLOOR"][0]
    assert "less than or equal to 1" in problems["V3_MEM0_CONFIDENCE_FLOOR"][1]
    # Each bad value says where it came from: the file, or the environment that overrides it.
    text = str(caught.value)
    assert f"V3_MEM0_TOP_K='lots' (from {tmp_path / '.env.executive'})" in text
    assert "EXECUTIVE_TIMEZONE='Mars/Olympus' (from environment)" in text


def test_a_secret_value_is_never_echoed_in_the_error(tmp_path, monkeypatch):
    monkeypatch.setenv("EXECUTIVE_QDRANT_API_KEY", "x" * 3000)  # fine as a value
    monkeypatch.setenv("V3_MEM0_COHORT", "has spaces")
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path)
    assert "x" * 100 not in str(caught.value)
    assert "V3_MEM0_COHORT='has spaces'" in str(caught.value)


def test_output_root_must_be_outside_the_home(tmp_path, monkeypatch):
    monkeypatch.setenv("EXECUTIVE_OUTPUT_ROOT", str(tmp_path / "inside"))
    with pytest.raises(SettingsError, match="outside the agent home"):
        load_settings(tmp_path)


def test_default_output_root_sits_beside_the_home(tmp_path):
    settings = load_settings(tmp_path / "agent")
    assert settings.outputs == tmp_path.resolve() / "agent-outputs"


def test_platform_store_needs_a_key(tmp_path, monkeypatch):
    monkeypatch.setenv("EXECUTIVE_STORE", "platform")
    with pytest.raises(SettingsError, match="V3_MEM0_API_KEY"):
        load_settings(tmp_path)


def test_every_hook_has_its_original_flag():
    assert [spec.flag for spec in SPECS.values()] == [
        "V3_MEM_HOOK_PRE_WORK",
        "V3_MEM_HOOK_PRE_SPAWN",
        "V3_MEM_HOOK_POST_RUN",
        "V3_MEM_HOOK_FAIL_DIAG",
        "V3_MEM_HOOK_POST_RETRO",
    ]


def test_reference_variables_are_all_read():
    names = set(variable_names())
    for name in [
        "V3_MEMORY_ENABLED",
        "V3_MEM0_API_KEY",
        "V3_MEM0_USER_ID",
        "V3_MEM0_TOP_K",
        "V3_MEM0_CONFIDENCE_FLOOR",
        "V3_MEM0_ENV",
        "V3_MEM0_COHORT",
        "IDLE_SLEEP_SECONDS",
        "UNHEALTHY_SLEEP_SECONDS",
        "WORKER_VENDOR",
        "WORKER_TIMEOUT_MS",
        "MODEL",
        "AGENT_PATH",
        "MAX_TURNS_PER_STEP",
        "BREAKDOWN_THRESHOLD_TURNS",
        *(spec.flag for spec in SPECS.values()),
    ]:
        assert name in names, name


BAD = {"V3_MEM0_TOP_K": "abc", "IDLE_SLEEP_SECONDS": "-4", "V3_MEM0_API_KEY": ""}


def test_start_up_with_invalid_values_prints_one_message_and_exits_2(home):
    env = {**BAD, "EXECUTIVE_LOG_FORMAT": "console"}
    result = run_cli("--home", str(home), "run", "--once", env=env)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("executive: invalid configuration:")
    assert "V3_MEM0_TOP_K='abc'" in result.stderr
    assert "IDLE_SLEEP_SECONDS='-4'" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("fix: ")
    assert result.stdout == ""


def test_under_a_supervisor_the_configuration_error_is_one_json_log_line(home):
    # A pipe (as PM2 and journald give it) and the JSON log format: where the log lines go.
    result = run_cli("--home", str(home), "run", env={**BAD, "EXECUTIVE_LOG_FORMAT": "json"})
    assert result.returncode == 2 and result.stderr == ""
    [line] = result.stdout.splitlines()
    record = json.loads(line)
    assert (record["level"], record["event"]) == ("error", "configuration.invalid")
    assert {p["variable"] for p in record["problems"]} == {"V3_MEM0_TOP_K", "IDLE_SLEEP_SECONDS"}
    assert all(p["source"] == "environment" for p in record["problems"])
    assert "executive doctor" in record["fix"]


def test_the_dashboard_bind_rule_is_named_and_reported_with_the_others(home):
    env = {**BAD, "EXECUTIVE_DASHBOARD": "true", "EXECUTIVE_DASHBOARD_BIND": "0.0.0.0:8377"}
    env["EXECUTIVE_LOG_FORMAT"] = "console"
    result = run_cli("--home", str(home), "status", env=env)
    assert result.returncode == 2
    assert "EXECUTIVE_DASHBOARD_BIND='0.0.0.0:8377' (from environment): is not loopback" in (
        result.stderr
    )
    assert "V3_MEM0_TOP_K='abc'" in result.stderr and "configuration=" not in result.stderr


def test_the_postgres_store_needs_a_postgres_url_and_keeps_it_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("EXECUTIVE_STORE", "postgres")
    with pytest.raises(SettingsError, match="EXECUTIVE_STORE=postgres needs EXECUTIVE_STORE_URL"):
        load_settings(tmp_path)
    monkeypatch.setenv("EXECUTIVE_STORE_URL", "mysql://u:topsecret1@h/db")
    with pytest.raises(SettingsError) as refused:
        load_settings(tmp_path)
    assert "must be a postgresql:// URL" in str(refused.value)
    assert "topsecret1" not in str(refused.value)
    monkeypatch.setenv("EXECUTIVE_STORE_URL", "postgresql://exec:p%40ss-word9@db:5432/memory")
    settings = load_settings(tmp_path)
    secrets = settings.secret_values()
    assert "postgresql://exec:p%40ss-word9@db:5432/memory" in secrets
    assert {"p%40ss-word9", "p@ss-word9"} <= set(secrets)


def test_the_executive_name_defaults_to_the_home_folder(tmp_path, monkeypatch):
    home = tmp_path / "Builder Box #2"
    home.mkdir()
    assert load_settings(home).executive == "Builder-Box-2"
    monkeypatch.setenv("EXECUTIVE_NAME", "ci-runner.7")
    assert load_settings(home).executive == "ci-runner.7"
    monkeypatch.setenv("EXECUTIVE_NAME", "no spaces")
    with pytest.raises(SettingsError, match="EXECUTIVE_NAME"):
        load_settings(home)
    monkeypatch.delenv("EXECUTIVE_NAME")
    monkeypatch.setenv("EXECUTIVE_PEER_HOMES", "relative/home")
    with pytest.raises(SettingsError, match="must be absolute folders"):
        load_settings(home)


def test_the_dashboards_listed_accounts_are_names_or_uids_of_this_host(tmp_path, monkeypatch):
    monkeypatch.setenv("EXECUTIVE_DASHBOARD_ALLOW_UIDS", "root, 54321")
    assert load_settings(tmp_path).dashboard_allowed_uids == {0, 54321}
    monkeypatch.setenv("EXECUTIVE_DASHBOARD_ALLOW_UIDS", "root,no-such-account,-3")
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path)
    [(variable, _, why)] = caught.value.problems
    assert variable == "EXECUTIVE_DASHBOARD_ALLOW_UIDS"
    assert why == "no such account on this host: no-such-account, -3"

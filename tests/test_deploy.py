"""Deployment files: ecosystem.config.js (PM2) and deploy/executive.service (systemd).

The PM2 file is evaluated by node, exactly as PM2 would load it; the unit file is linted
with ``systemd-analyze verify``. Both need tools that may be absent: those tests skip,
saying which tool is missing. The static checks of the unit text always run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import clean_env, run_cli

REPO = Path(__file__).resolve().parents[1]
ECOSYSTEM = REPO / "ecosystem.config.js"
UNIT = REPO / "deploy" / "executive.service"

# The daemon's default shutdown grace (EXECUTIVE_SHUTDOWN_GRACE_SECONDS).
GRACE_SECONDS = 30
# Upper bound of the daemon's start-up time (memory store + embedding model).
STARTUP_SECONDS = 20

NODE = shutil.which("node")
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
# ExecStart stand-in for the verify tests: any executable that exists on the host.
STAND_IN = "/usr/bin/env"

needs_node = pytest.mark.skipif(
    NODE is None, reason="node is not installed: cannot evaluate ecosystem.config.js"
)
needs_systemd_analyze = pytest.mark.skipif(
    SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed: cannot lint the unit file"
)


# --------------------------------------------------------------------------- PM2


def load_ecosystem(**env_overrides: str | None) -> dict:
    """Evaluate ecosystem.config.js in node and return the exported object.

    ``env_overrides`` maps variable names to values for the node process; None removes the
    variable, so a test sees the file's defaults whatever the caller's shell exports.
    """
    env = dict(os.environ)
    for key, value in env_overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    script = "const c = require(process.argv[1]); process.stdout.write(JSON.stringify(c));"
    proc = subprocess.run(
        [NODE, "-e", script, str(ECOSYSTEM)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"node could not load {ECOSYSTEM}:\n{proc.stderr}"
    return json.loads(proc.stdout)


def the_app(config: dict) -> dict:
    apps = config["apps"]
    assert [a["name"] for a in apps] == ["executive"], "exactly one PM2 app, named executive"
    return apps[0]


def pm2_duration_ms(value: int | str) -> int:
    """PM2 durations: a number of ms, or "<n>s" / "<n>m" / "<n>h" (PM2 schema regex)."""
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"(\d+)(h|m|s)?", value)
    assert match, f"not a PM2 duration: {value!r}"
    number, unit = int(match.group(1)), match.group(2)
    return number * {None: 1, "s": 1_000, "m": 60_000, "h": 3_600_000}[unit]


def pm2_bytes(value: int | str) -> int:
    """PM2 sizes: bytes, or "<n>K" / "<n>M" / "<n>G" (PM2 schema regex)."""
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"(\d+)(G|M|K)?", value)
    assert match, f"not a PM2 size: {value!r}"
    number, unit = int(match.group(1)), match.group(2)
    return number * {None: 1, "K": 1024, "M": 1024**2, "G": 1024**3}[unit]


@needs_node
def test_ecosystem_runs_the_venv_entry_point_directly():
    app = the_app(load_ecosystem(EXECUTIVE_HOME=None, EXECUTIVE_SHUTDOWN_GRACE_SECONDS=None))

    assert app["script"] == str(REPO / ".venv" / "bin" / "executive")
    assert app["args"] == "run"
    # "none": PM2 execs the console script itself (its shebang names the venv python), so the
    # PID PM2 signals is the daemon, not a node or shell wrapper.
    assert app["interpreter"] == "none"
    assert app["cwd"] == str(REPO)
    assert app.get("exec_mode", "fork") in ("fork", "fork_mode")
    assert app.get("instances", 1) == 1


@needs_node
def test_ecosystem_environment():
    app = the_app(load_ecosystem(EXECUTIVE_HOME=None, EXECUTIVE_SHUTDOWN_GRACE_SECONDS=None))
    env = app["env"]
    assert env["PYTHONUNBUFFERED"] == "1"
    # Falls back to a demo home inside the checkout...
    assert env["EXECUTIVE_HOME"] == f"{REPO}/demo-home"
    # ...and follows the shell that runs `pm2 start`.
    app = the_app(load_ecosystem(EXECUTIVE_HOME="/srv/agent-home"))
    assert app["env"]["EXECUTIVE_HOME"] == "/srv/agent-home"
    # No secrets in the process file: they live in <home>/.env.executive.
    assert not [k for k in env if re.search(r"KEY|TOKEN|SECRET|PASSWORD", k)]


@needs_node
def test_ecosystem_restart_policy():
    app = the_app(load_ecosystem(EXECUTIVE_SHUTDOWN_GRACE_SECONDS=None))

    assert app["autorestart"] is True
    # SIGUSR2 makes the daemon exit 0 so that PM2 restarts it: 0 must not be a "stop" code.
    assert 0 not in (app.get("stop_exit_codes") or [])
    # Exit 2 is a configuration error, 4 another daemon on the home (the CLI's own constant):
    # a restart cannot fix either, so PM2 must not loop on them.
    from executive.cli.daemon import ALREADY_RUNNING

    assert app["stop_exit_codes"] == [2, ALREADY_RUNNING]
    assert isinstance(app["max_restarts"], int) and app["max_restarts"] > 0
    # PM2 7 leaves an app that exited with a stop code "waiting restart" (not "stopped")
    # when either restart delay is set (God.js, handleExit).
    assert "exp_backoff_restart_delay" not in app and "restart_delay" not in app
    # A slow start-up must not count as a crash, and a crash loop must be caught.
    assert pm2_duration_ms(app["min_uptime"]) > STARTUP_SECONDS * 1000
    # The store plus the ONNX model use ~200 MB: the ceiling must sit well above that.
    assert pm2_bytes(app["max_memory_restart"]) >= 1000 * 1024**2
    # No cron restarts and no second app: the snapshot runs in-process.
    assert "cron_restart" not in app


@needs_node
def test_ecosystem_names_the_package_version():
    from executive import __version__

    assert the_app(load_ecosystem())["version"] == __version__
    # What `pm2 ls` shows: the version of the package.json beside the script.
    assert json.loads((REPO / "package.json").read_text())["version"] == __version__


@needs_node
def test_ecosystem_shutdown_outlasts_the_grace_period():
    app = the_app(load_ecosystem(EXECUTIVE_SHUTDOWN_GRACE_SECONDS=None))
    assert isinstance(app["kill_timeout"], int)
    assert app["kill_timeout"] > GRACE_SECONDS * 1000
    # Only the daemon is signalled; it ends its own workers (PM2's KillMode=mixed).
    assert app["treekill"] is False
    # wait_ready needs Node's process.send('ready'): unusable from Python.
    assert not app.get("wait_ready")

    # A longer grace exported before `pm2 start` stretches kill_timeout with it.
    app = the_app(load_ecosystem(EXECUTIVE_SHUTDOWN_GRACE_SECONDS="100"))
    assert app["kill_timeout"] > 100_000


@needs_node
def test_ecosystem_logs_are_raw_json_lines():
    app = the_app(load_ecosystem(EXECUTIVE_LOG_DIR="/var/log/executive"))
    assert app["out_file"] == "/var/log/executive/executive.out.log"
    assert app["error_file"] == "/var/log/executive/executive.err.log"
    assert app["merge_logs"] is True
    # PM2 timestamps would prefix every JSON line and break `jq`.
    assert not app.get("time")
    assert "log_date_format" not in app


# --------------------------------------------------------------------------- systemd


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """Sections of a unit file as ordered (key, value) lists; keys may repeat."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        assert current is not None, f"line outside any section: {raw!r}"
        key, sep, value = line.partition("=")
        assert sep, f"line without '=': {raw!r}"
        current.append((key.strip(), value.strip()))
    return sections


def values(section: list[tuple[str, str]], key: str) -> list[str]:
    return [v for k, v in section if k == key]


def one(section: list[tuple[str, str]], key: str) -> str:
    found = values(section, key)
    assert len(found) == 1, f"{key}= should appear once, found {found}"
    return found[0]


def seconds(value: str) -> int:
    """systemd time spans used here: "<n>", "<n>s" or "<n>min"."""
    match = re.fullmatch(r"(\d+)\s*(s|sec|min)?", value)
    assert match, f"unexpected time span {value!r}"
    return int(match.group(1)) * (60 if match.group(2) == "min" else 1)


@pytest.fixture(scope="module")
def unit():
    return parse_unit(UNIT.read_text())


def test_unit_readiness_watchdog_and_restart(unit):
    service = unit["Service"]
    assert one(service, "Type") == "notify"
    assert one(service, "NotifyAccess") == "main"
    # Pings come at WatchdogSec/2; the idle loop ticks every 30 s. 90 s leaves a margin.
    assert seconds(one(service, "WatchdogSec")) == 90
    assert seconds(one(service, "TimeoutStartSec")) >= 6 * STARTUP_SECONDS
    assert one(service, "Restart") == "on-failure"
    assert seconds(one(service, "RestartSec")) > 0
    # Exit 2 is a configuration error, 4 another daemon on the home: no restart loop.
    assert one(service, "RestartPreventExitStatus") == "2 4"
    # The start limit belongs in [Unit]; in [Service] systemd ignores it.
    for key in ("StartLimitIntervalSec", "StartLimitBurst"):
        assert values(unit["Unit"], key), f"{key}= missing from [Unit]"
        assert not values(service, key), f"{key}= must not be in [Service]"


def test_unit_shutdown(unit):
    service = unit["Service"]
    assert one(service, "KillMode") == "mixed"
    assert one(service, "KillSignal") == "SIGTERM"
    assert seconds(one(service, "TimeoutStopSec")) > GRACE_SECONDS


def test_unit_process_and_environment(unit):
    service = unit["Service"]
    assert one(service, "ExecStart") == "/opt/executive/.venv/bin/executive run"
    assert one(service, "User") == "executive"
    assert one(service, "Group") == "executive"
    assert one(service, "UMask") == "0077"
    assert one(service, "WorkingDirectory").startswith("/")
    # Optional ("-") root-owned overrides; secrets are read by the daemon from the home.
    assert one(service, "EnvironmentFile") == "-/etc/executive/executive.env"
    assignments = " ".join(values(service, "Environment")).split()
    assert "EXECUTIVE_HOME=/var/lib/executive/home" in assignments
    assert "PYTHONUNBUFFERED=1" in assignments
    assert values(unit["Install"], "WantedBy") == ["multi-user.target"]


def test_unit_hardening_still_lets_workers_run(unit):
    service = dict(unit["Service"])  # last value wins, as in systemd
    assert service.get("NoNewPrivileges") == "yes"
    assert service.get("ProtectSystem") == "strict"
    assert service.get("PrivateTmp") == "yes"
    # The home must stay writable under ProtectSystem=strict.
    writable = " ".join(values(unit["Service"], "ReadWritePaths")).split()
    state_dirs = [
        "/var/lib/" + d for d in " ".join(values(unit["Service"], "StateDirectory")).split()
    ]
    home = "/var/lib/executive/home"
    assert any(
        home == p.lstrip("-") or home.startswith(p.lstrip("-") + "/") for p in writable + state_dirs
    )
    # Workers run node (a JIT): no W^X enforcement.
    assert service.get("MemoryDenyWriteExecute", "no") == "no"
    # Claude Code's bubblewrap sandbox needs user/pid/net namespaces and a fresh /proc,
    # which these settings forbid (see the comments in the unit).
    assert service.get("RestrictNamespaces", "no") == "no"
    assert service.get("PrivateUsers", "no") == "no"
    for key in ("ProtectKernelTunables", "ProtectKernelLogs"):
        assert service.get(key, "no") == "no", f"{key}=yes breaks bubblewrap's /proc mount"
    for key in ("ProtectProc", "ProcSubset"):
        assert key not in service, f"{key}= breaks bubblewrap's /proc mount"
    # Workers need the network, and bubblewrap/getifaddrs need netlink.
    families = service.get("RestrictAddressFamilies", "").split()
    if families:
        assert {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"} <= set(families)
    filters = " ".join(values(unit["Service"], "SystemCallFilter"))
    assert "@system-service" not in filters, "an allow-list without @mount breaks bubblewrap"
    for group in ("@mount", "@privileged"):
        assert group not in filters


def test_pm2_and_systemd_agree_on_the_stop_budget(unit):
    """Both supervisors wait longer than the daemon's grace before killing it."""
    text = ECOSYSTEM.read_text()
    match = re.search(r"Math\.max\((\d+)", text)
    assert match, "kill_timeout floor not found in ecosystem.config.js"
    assert int(match.group(1)) == seconds(one(unit["Service"], "TimeoutStopSec")) * 1000


# ----------------------------------------------------------- systemd-analyze verify


def verify(unit_text: str, tmp_path: Path) -> tuple[bool, str]:
    """Run ``systemd-analyze verify`` on a copy of a unit; return (clean, output).

    Two honest adjustments:

    * ExecStart's binary is replaced by an executable that exists here, because verify fails
      any unit whose ExecStart binary is missing, and /opt/executive is not installed on a
      test machine. Only the binary path changes; the arguments stay.
    * verify exits 0 on many real errors: a misspelt key, an unparsable value or a line
      without "=" are logged as "..., ignoring." (systemd 252). So "clean" also requires
      that verify printed nothing about this unit. Diagnostics about other units on the host
      (verify loads the dependencies, e.g. network-online.target) are not ours and are
      ignored.

    User=/Group= stay in: systemd 252 does not check that the user exists.
    """
    unit_dir = tmp_path / "units"
    unit_dir.mkdir()
    copy = unit_dir / "executive.service"
    rewritten, count = re.subn(
        r"^(ExecStart=[-@:+!]*)/opt/executive/\.venv/bin/executive\b",
        rf"\g<1>{STAND_IN}",
        unit_text,
        flags=re.MULTILINE,
    )
    assert count <= 1
    copy.write_text(rewritten)
    proc = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--man=no", str(copy)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = (proc.stdout + proc.stderr).strip()
    ours = [
        line for line in output.splitlines() if str(copy) in line or "executive.service" in line
    ]
    return proc.returncode == 0 and not ours, output


@needs_systemd_analyze
def test_systemd_analyze_verify_accepts_the_unit(tmp_path):
    if not Path(STAND_IN).exists():
        pytest.skip(f"{STAND_IN} missing: no stand-in for ExecStart")
    clean, output = verify(UNIT.read_text(), tmp_path)
    assert clean, f"systemd-analyze verify complained:\n{output}"


BREAKAGES = {
    # verify exits 0 on these three: only its "ignoring" warning reveals them.
    "misspelt key": ("WatchdogSec=90", "WatchdogSecs=90"),
    "bad value": ("Type=notify", "Type=notfy"),
    "line without '='": ("KillMode=mixed", "KillMode mixed"),
    # verify exits non-zero on this one.
    "no ExecStart": ("ExecStart=/opt/executive/.venv/bin/executive run", ""),
}


@needs_systemd_analyze
@pytest.mark.parametrize("breakage", BREAKAGES.values(), ids=BREAKAGES.keys())
def test_systemd_analyze_verify_catches_a_broken_copy(tmp_path, breakage):
    if not Path(STAND_IN).exists():
        pytest.skip(f"{STAND_IN} missing: no stand-in for ExecStart")
    good, bad = breakage
    text = UNIT.read_text()
    assert re.search(rf"^{re.escape(good)}$", text, flags=re.MULTILINE), f"{good!r} not in the unit"
    broken = re.sub(rf"^{re.escape(good)}$", bad, text, count=1, flags=re.MULTILINE)
    clean, output = verify(broken, tmp_path)
    assert not clean, f"a broken unit passed verification:\n{output}"


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_documented_pm2_log_recipe_survives_pm2_7_header_lines():
    # PM2 7 prints these on stdout even with --raw; `jq .` stopped at the first one.
    pm2_output = (
        "[TAILING] Tailing last 15 lines for [executive] process (change the value with --lines option)\n"
        "/root/.pm2/logs/executive.out.log last 15 lines:\n"
        '{"event": "daemon.ready", "level": "info"}\n'
        "\n"
        '{"event": "loop.idle", "level": "info"}\n'
    )
    readme = (REPO / "deploy" / "README.md").read_text()
    [recipe] = re.findall(r"pm2 logs executive --raw \| jq (-R '[^']+')\n", readme)
    program = recipe.removeprefix("-R ").strip("'")
    proc = subprocess.run(
        ["jq", "-c", "-R", program], input=pm2_output, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["event"] for line in proc.stdout.splitlines()] == [
        "daemon.ready",
        "loop.idle",
    ]


# --- every command of the deploy guide that can run here, run --------------------------------
def guide_commands() -> list[str]:
    text = (REPO / "deploy" / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [re.sub(r"\s+#\s.*$", "", x) for x in lines if x and not x.startswith("#")]


def _here(command: str, home: Path) -> str | None:
    """The command as it runs on this machine, or None when it needs what is not here (PM2,
    systemctl, a root account of its own, an editor, the network)."""
    command = command.replace("sudo -u executive -H ", "")
    for path in ("/opt/executive", "~/executive"):
        command = command.replace(path, str(REPO))
    command = command.replace("/var/lib/executive/home", str(home))
    command = command.replace('"$EXECUTIVE_HOME"', str(home)).replace("$EXECUTIVE_HOME", str(home))
    if "| jq" in command:  # a log recipe: fed a real daemon's log instead of PM2's or journald's
        # PM2 7 and journald add lines that are not JSON; PM2's own log file holds none.
        source = "LOG" if command.startswith("tail ") else "NOISY"
        return f"cat {source} | " + command.split("|", 1)[1].strip()
    first = command.split()[0]
    if first.endswith(".venv/bin/executive") or command.startswith("chmod 600"):
        return command
    return None


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_every_command_of_the_deploy_guide_that_can_run_here_runs(tmp_path):
    home = tmp_path / "home"
    runnable = [c for c in (_here(x, home) for x in guide_commands()) if c]
    assert sum(c.startswith("cat ") for c in runnable) >= 5
    assert any(" init " in c for c in runnable) and any(c.endswith(" doctor") for c in runnable)
    log, noisy = tmp_path / "daemon.log", tmp_path / "noisy.log"
    for command in runnable:
        if command.startswith("cat ") and not log.exists():
            env = {"EXECUTIVE_LOG_FORMAT": "json"}
            ran = run_cli("--home", str(home), "run", "--once", env=env)
            assert ran.returncode == 0, ran.stderr
            log.write_text(ran.stdout)
            noisy.write_text("[TAILING] Tailing last 15 lines\n" + ran.stdout)
        shell = command.replace("cat NOISY", f"cat {noisy}").replace("cat LOG", f"cat {log}")
        done = subprocess.run(
            ["bash", "-c", shell],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            # The operator's edit of .env.executive, which the guide asks for: no Claude Code
            # CLI here, so its workers are command workers.
            env=clean_env({"WORKER_VENDOR": "command"}),
            check=False,
        )
        assert done.returncode == 0, (command, done.stdout[-1500:], done.stderr[-1500:])
        if "select(.level" in command or "select(.event" in command:
            continue  # a filter may rightly find nothing
        if "jq" in command:
            assert done.stdout.strip(), command

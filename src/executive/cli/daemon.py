"""``executive init | run | status | doctor``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
import typer

from executive.cli.app import app, emit_json, fail, load
from executive.daemon import app as daemon_app
from executive.daemon import doctor as doctor_mod
from executive.daemon import status as status_mod
from executive.home import Home, UnsafeHome
from executive.logs import configure_logging
from executive.workspace.scaffold import scaffold


@app.command()
def init(
    ctx: typer.Context,
    directory: Annotated[Path | None, typer.Argument(help="Where to create the home.")] = None,
    demo: Annotated[
        bool,
        typer.Option(help="Memory on (go-live state) and demo bundles for the command vendor."),
    ] = False,
) -> None:
    """Scaffold an agent home: a git repository with the workspace, ledgers and config."""
    target = directory or ctx.find_root().obj.home or Path.cwd()
    result = scaffold(target, demo=demo)
    typer.echo(f"agent home: {result.home}")
    for name in result.created:
        typer.echo(f"  created {name}")
    for name in result.kept:
        typer.echo(f"  kept    {name}")
    typer.echo(f"next: executive --home {result.home} doctor")


@app.command()
def run(
    ctx: typer.Context,
    once: Annotated[bool, typer.Option(help="Run one iteration and exit.")] = False,
    log_format: Annotated[
        str | None, typer.Option(help="json, console or auto (overrides EXECUTIVE_LOG_FORMAT).")
    ] = None,
) -> None:
    """Run the daemon in the foreground (under PM2 or systemd in production)."""
    settings = load(ctx)
    configure_logging(
        fmt=log_format or settings.log_format,
        level=settings.log_level,
        secrets=settings.secret_values(),
    )
    home = Home(settings.home)
    if not home.root.is_dir():
        fail(
            f"the agent home {home.root} does not exist; create it with: executive init {home.root}"
        )
    supervisor = daemon_app.build(settings)
    try:
        with daemon_app.daemon_lock(home):
            code = anyio.run(supervisor.run_once if once else supervisor.run)
    except (daemon_app.AlreadyRunning, UnsafeHome) as exc:
        fail(str(exc))
    raise typer.Exit(code)


@app.command()
def status(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Hooks on or off and why, queue counts, next snapshot, last iterations."""
    settings = load(ctx)
    report = status_mod.gather(settings)
    if as_json:
        emit_json(report)
        return
    daemon = report["daemon"]
    typer.echo(f"home     {report['home']}")
    typer.echo(
        f"daemon   {'running, pid ' + str(daemon['pid']) if daemon['running'] else 'not running'}"
    )
    mem = report["memory"]
    typer.echo(
        f"memory   {'on' if mem['enabled'] else 'off'}  store={mem['store']} engine={mem['engine']} env={mem['env']}"
    )
    for hook, info in report["hooks"].items():
        typer.echo(f"  hook {hook:<20} {'on ' if info['on'] else 'off'}  {info['reason']}")
    queue = report["queue"]
    in_progress = " ".join(f"{p}={n}" for p, n in queue["in_progress"].items())
    typer.echo(
        f"queue    ondeck={queue['ondeck']} in-progress[{in_progress}] "
        f"completed={queue['completed']} blocked={queue['blocked']}"
    )
    typer.echo(f"pending writes  {report['pending_writes']}  (unconfirmed; replayed on a schedule)")
    typer.echo(
        f"snapshot last {report['last_snapshot'] or 'never'}, next at {report['next_snapshot']}"
    )
    for it in report["recent_iterations"][-5:]:
        typer.echo(
            f"  iteration {it['iteration']}: {it['pace']} in {it['duration_ms']} ms at {it['finished_at']}"
        )


@app.command()
def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check configuration, the home, git, the store and the workers; exit 1 on a failure."""
    settings = load(ctx)
    checks = doctor_mod.run_checks(settings)
    if as_json:
        emit_json([c.as_dict() for c in checks])
    else:
        for check in checks:
            mark = "ok  " if check.ok else ("warn" if check.warning else "FAIL")
            typer.echo(f"[{mark}] {check.name}: {check.detail}")
            if not check.ok and check.fix:
                typer.echo(f"       fix: {check.fix}")
    if doctor_mod.failed(checks):
        raise typer.Exit(1)

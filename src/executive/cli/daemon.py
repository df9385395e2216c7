"""``executive init | run | status | doctor``."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, NoReturn

import anyio
import typer

from executive.cli.root import (
    JsonFlag,
    app,
    configuration_error,
    emit_json,
    fail,
    home_option,
    load,
    load_quiet,
)
from executive.config.sources import resolve_home
from executive.daemon import status as status_mod
from executive.daemon.lock import AlreadyRunning, daemon_lock
from executive.home import Home, UnsafeHome
from executive.logs import configure_logging
from executive.settings import Settings, SettingsError, load_settings
from executive.workspace.scaffold import ForeignRepository, scaffold

# `executive run`'s exit when another daemon holds the home (docs/commands.md lists every code).
ALREADY_RUNNING = 4


@app.command()
def init(
    ctx: typer.Context,
    directory: Annotated[Path | None, typer.Argument(help="Where to create the home.")] = None,
    demo: Annotated[
        bool,
        typer.Option(help="Memory on (go-live state) and demo bundles for the command vendor."),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(help="Make an existing git repository with commits an agent home."),
    ] = False,
) -> None:
    """Scaffold an agent home: a git repository with the workspace, ledgers and config."""
    try:
        result = scaffold(directory or home_option(ctx) or Path.cwd(), demo=demo, force=force)
    except ForeignRepository as exc:
        fail(str(exc))
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
    # The daemon's modules (the loop, the dashboard, the scheduler) load only to run it.
    from executive.daemon import assembly, heap

    heap.configure()  # before the store, the embedder and their threads allocate

    supervisor = assembly.build(settings)
    try:
        with daemon_lock(Home(settings.home)):
            code = anyio.run(supervisor.run_once if once else supervisor.run)
    except AlreadyRunning as exc:
        # Not a crash: a restart would meet the same daemon. Its own code, which PM2's
        # stop_exit_codes and systemd's RestartPreventExitStatus name, so neither loops.
        fail(f"{exc}; this one exits {ALREADY_RUNNING} (stop that one first)", ALREADY_RUNNING)
    except UnsafeHome as exc:
        fail(str(exc))
    _exit_now(code)


def _exit_now(code: int) -> NoReturn:
    """Leave without the interpreter's teardown once everything is closed and flushed.

    The store is closed, the ledgers are fsynced and the lock is released by now; what is
    left is freeing native libraries' memory (the embedding runtime's), which took ~2 s
    after ``daemon.stopped`` and made supervisors wait for a process that had nothing to do.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@app.command()
def status(
    ctx: typer.Context,
    as_json: JsonFlag = False,
    probe: Annotated[
        bool, typer.Option("--probe", help="A health check: exit 1 also when no daemon answers.")
    ] = False,
) -> None:
    """The running daemon's view (health, hooks and where their values came from, queue, store, jobs).

    Asked of the daemon over its control socket; with no daemon, the files' view. Exits 1 when
    the daemon runs but is unhealthy (its last iterations all failed), 3 when it runs degraded
    (a part of it failed, such as a dashboard that cannot bind: a restart does not cure that),
    2 when the configuration is invalid now (a running daemon is still shown: it started with
    the values it had; a restart would fail), 0 otherwise; with ``--probe`` also 1 when no
    daemon answers (for a supervisor's check).
    """
    root = resolve_home(home_option(ctx))
    if Home(root).not_a_home() is None:  # no home: `load` says so
        try:
            load_settings(home_option(ctx))
        except SettingsError as invalid:
            _status_of_a_daemon_whose_file_is_invalid(root, invalid, as_json)
    settings = load(ctx)
    report, note = _status_report(settings, Home(settings.home))
    if as_json:
        emit_json(report)
    else:
        typer.echo("\n".join(status_mod.render(report, note)))
    if status_mod.unhealthy(report) or (probe and report.get("source") != "daemon"):
        raise typer.Exit(1)
    if status_mod.degraded(report):
        raise typer.Exit(3)


def _status_of_a_daemon_whose_file_is_invalid(
    root: Path, invalid: SettingsError, as_json: bool
) -> NoReturn:
    """A typo in ``.env.executive`` must not hide a daemon that runs: it started with valid
    values and still answers. Its view, then the problems (exit 2: the next start fails)."""
    from executive.surface.control import RemoteSurface, daemon_listening
    from executive.surface.operations import SurfaceError

    home = Home(root)
    if not daemon_listening(home.socket):
        configuration_error(invalid, root)  # no daemon to show: the error alone, exit 2
    try:
        report = anyio.run(RemoteSurface(home.socket).call, "status")
    except SurfaceError:
        configuration_error(invalid, root)
    problems = [
        {"variable": v, "value": value, "why": why, "source": invalid.sources.get(v)}
        for v, value, why in invalid.problems
    ]
    if as_json:
        emit_json({**report, "configuration_errors": problems})
    else:
        typer.echo("\n".join(status_mod.render(report)))
        typer.echo("config   INVALID now: the running daemon keeps the values it started with; a")
        typer.echo("         restart would fail until this is fixed:")
        for line in str(invalid).splitlines()[1:]:
            typer.echo(f"         {line.strip()}")
    raise typer.Exit(2)


def _status_report(settings: Settings, home: Home) -> tuple[dict[str, Any], str]:
    from executive.surface.control import RemoteSurface, daemon_listening
    from executive.surface.operations import SurfaceError

    if daemon_listening(home.socket):
        try:
            return anyio.run(RemoteSurface(home.socket).call, "status"), ""
        except SurfaceError as exc:
            return status_mod.gather(settings), f"the daemon did not answer ({exc}); files' view"
    return status_mod.gather(settings), "no daemon answers; this is what the files say"


@app.command()
def doctor(
    ctx: typer.Context,
    as_json: JsonFlag = False,
) -> None:
    """Check configuration, the home, git, the store and the workers; exit 1 on a failure."""
    settings = load_quiet(ctx)  # opening the store logs; --json must stay one document
    from executive.daemon import doctor as doctor_mod  # its checks load the engines: only here

    def show(check: doctor_mod.Check) -> None:
        mark = "ok  " if check.ok else ("warn" if check.warning else "FAIL")
        typer.echo(f"[{mark}] {check.name}: {check.detail}")
        if not check.ok and check.fix:
            typer.echo(f"       fix: {check.fix}")

    # Each line as its check ends: a slow check (a store that does not answer) is not silence.
    checks = doctor_mod.run_checks(settings, report=None if as_json else show)
    if as_json:
        emit_json([asdict(c) for c in checks])
    if doctor_mod.failed(checks):
        raise typer.Exit(1)

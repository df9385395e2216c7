"""The root ``executive`` app and what every command shares."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from executive import __version__
from executive.config.sources import resolve_home
from executive.dates import now_iso
from executive.home import Home
from executive.logs import configure_logging
from executive.redact import scrub
from executive.settings import Settings, SettingsError, load_settings

app = typer.Typer(
    name="executive",
    help="The executive loop of a 24/7 coding agent, with a memory that compounds.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"executive {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print the version and exit.",
        ),
    ] = False,
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            help="The agent home (default: EXECUTIVE_HOME, AGENT_PATH, or the current folder).",
        ),
    ] = None,
) -> None:
    ctx.obj = home
    # A command's answer is its stdout; its log lines go to stderr, warnings and up (``run``
    # sends its own to stdout, where a supervisor collects them).
    configure_logging(fmt="auto", level="warning", stream=sys.stderr)


def home_option(ctx: typer.Context) -> Path | None:
    """``--home`` as given (None: left to EXECUTIVE_HOME, AGENT_PATH or the current folder)."""
    obj = ctx.find_root().obj
    return obj if isinstance(obj, Path) else None


def load(ctx: typer.Context, **overrides: Any) -> Settings:
    """Settings for this command, or exit 2 with one message naming every bad variable.

    Only ``init`` makes an agent home: any other command on a folder that is none (or on
    none at all) is refused before anything is read or written, with the command that makes
    one.
    """
    home = resolve_home(home_option(ctx))
    if (why := Home(home).not_a_home()) is not None:
        refused = SettingsError([("EXECUTIVE_HOME", str(home), f"not an agent home: {why}")])
        configuration_error(refused, home, fix=f"fix: executive init {home} (or --home <a home>)")
    try:
        return load_settings(home_option(ctx), **overrides)
    except SettingsError as exc:
        configuration_error(exc, home)


def load_quiet(ctx: typer.Context, **overrides: Any) -> Settings:
    """:func:`load`, for a command whose stdout is its answer: its log lines go to stderr."""
    settings = load(ctx, **overrides)
    configure_logging(
        fmt="json", level="warning", secrets=settings.secret_values(), stream=sys.stderr
    )
    return settings


CONFIG_FIX = (
    "fix: correct each value where it came from (the environment wins over .env.executive), "
    "then run the command again; `executive doctor` checks every value"
)


def configuration_error(exc: SettingsError, home: Path, fix: str = CONFIG_FIX) -> NoReturn:
    """Exit 2, said in the log's format: a supervisor's journal or a pipe gets one JSON object
    on stdout (where the daemon's log lines go); a terminal gets the plain message."""
    fmt = _log_format(home)
    if fmt == "json" or (fmt == "auto" and not sys.stdout.isatty()):
        record = {
            "timestamp": now_iso(),
            "level": "error",
            "event": "configuration.invalid",
            "logger": "executive.settings",
            "problems": [
                {"variable": v, "value": value, "why": why, "source": exc.sources.get(v)}
                for v, value, why in exc.problems
            ],
            "fix": fix.removeprefix("fix: "),
        }
        sys.stdout.write(scrub(json.dumps(record)) + "\n")
        sys.stdout.flush()
        if not sys.stderr.isatty():
            raise typer.Exit(2)
    typer.echo(scrub(f"executive: {exc}\n{fix}"), err=True)
    raise typer.Exit(2)


def _log_format(home: Path) -> str:
    """EXECUTIVE_LOG_FORMAT as the environment or the home's file says it; ``auto`` when it is
    unset or is itself the bad value."""
    from dotenv import dotenv_values  # pydantic-settings' own reader of env files

    if (value := os.environ.get("EXECUTIVE_LOG_FORMAT")) is None:
        with contextlib.suppress(OSError, ValueError):  # unreadable, or not UTF-8
            value = dotenv_values(Home(home).env_file).get("EXECUTIVE_LOG_FORMAT")
    value = (value or "").strip().strip("'\"")
    return value if value in ("json", "console") else "auto"


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"executive: {message}", err=True)
    raise typer.Exit(code)


JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def emit_json(value: Any, failed: bool = False) -> None:
    sys.stdout.write(json.dumps(value, indent=2, default=str) + "\n")
    if failed:
        raise typer.Exit(1)

"""The root ``executive`` app and what every command shares."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from executive import __version__
from executive.settings import Settings, SettingsError, load_settings

app = typer.Typer(
    name="executive",
    help="The executive loop of a 24/7 coding agent, with a memory that compounds.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@dataclass
class CliState:
    home: Path | None = None


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
    ctx.obj = CliState(home=home)


def state(ctx: typer.Context) -> CliState:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, CliState) else CliState()


def load(ctx: typer.Context, **overrides: Any) -> Settings:
    """Settings for this command, or exit 2 with one message naming every bad variable."""
    try:
        return load_settings(state(ctx).home, **overrides)
    except SettingsError as exc:
        fail(str(exc), code=2)


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"executive: {message}", err=True)
    raise typer.Exit(code)


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, default=str) + "\n")

"""The ``executive`` command: thin typer commands that parse, call and print."""

from executive.cli import bundle, daemon, hooks, memory  # noqa: F401  (registers commands)
from executive.cli.root import app


def main() -> None:
    app()

"""The ``executive`` command: thin typer commands that parse, call and print."""

from executive.cli import bundle as _bundle  # noqa: F401
from executive.cli import daemon as _daemon  # noqa: F401  (registers commands)
from executive.cli import hooks as _hooks  # noqa: F401
from executive.cli import memory as _memory  # noqa: F401
from executive.cli.root import app


def main() -> None:
    app()


__all__ = ["app", "main"]

"""The configuration reference, ``docs/configuration.md``, written from the settings themselves.

Every variable, its type, its default and what it does come from the fields of
:class:`executive.settings.Settings`, so the reference cannot drift from the code (a test
compares the committed page with what this writes). Regenerate it with
``python -m executive.reference`` from the repository's root.
"""

from __future__ import annotations

import argparse
import types
import typing
from pathlib import Path

from pydantic import SecretStr
from pydantic.fields import FieldInfo

from executive.config.sources import aliases
from executive.envfile import default_text
from executive.settings import Settings

PAGE = Path("docs/configuration.md")

_INTRO = """\
# Configuration

<!-- Written by `python -m executive.reference` from src/executive/settings.py: do not
edit by hand; change a field's description there and run it again. -->

Every variable, with a one-line comment, is also in `.env.executive.example` at the root of the
repository (`executive init` writes the same template into a new home). Values come from the
process environment, then `<home>/.env.executive`; the environment wins, and
`executive status` says where each value came from.

- **An empty value means unset, for every variable.** `V3_MEM0_COHORT=` is the default, not
  an empty cohort. (The original stamped `cohort: ""` on every write and lost a harvest.)
- **Flags** are `true` or `false`, in any case. Anything else is an error, not "off".
- **An invalid value stops start-up** with one message naming each bad variable, its value
  and why, and exit code 2. Secret values are never echoed.
- **A misspelt key is named**: a key in our namespaces (`V3_*`, `EXECUTIVE_*`) that no
  setting reads, in `.env.executive` or in the process environment (PM2's `env`, systemd's
  `Environment=`), is reported by `executive doctor` and at start-up (`config.unknown_key`,
  one line each, with `file` or `source: environment`), with the closest real name.
  `EXECUTIVE_HOME` and `EXECUTIVE_MODELS_DIR` are read before the settings and are no typo.
- **Worker isolation and limits** (`EXECUTIVE_WORKER_*`, `EXECUTIVE_SANDBOX_*`): what each
  mode and limit does is in [Security](security.md).

| variable | type | default | what it does |
|---|---|---|---|
"""


def _type_text(annotation: object) -> str:
    """The field's type in an operator's words; ``| None`` is said by the default (unset)."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return " or ".join(_type_text(arg) for arg in args if arg is not type(None))
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(f"`{value}`" for value in args)
    if typing.get_origin(annotation) is typing.Annotated:
        return _type_text(args[0])
    names = {bool: "flag", int: "integer", float: "number", str: "text", Path: "path"}
    if annotation is SecretStr:
        return "secret"
    if isinstance(annotation, type) and annotation in names:
        return names[annotation]
    raise TypeError(f"no words for the settings type {annotation!r}: add it to _type_text")


def _default_text(info: FieldInfo) -> str:
    if info.default_factory is not None:
        return "computed (see what it does)"
    if text := default_text(info):
        return f"`{text}`"
    return "unset" if info.get_default(call_default_factory=False) is None else "empty"


def _cell(text: str) -> str:
    """Text made safe for a Markdown table cell: no bar, no line break, no raw HTML."""
    text = " ".join(text.split()).replace("|", "\\|").replace("*", "\\*")
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _row(info: FieldInfo) -> str:
    names = aliases(info.validation_alias)
    variable = f"`{names[0]}`"
    if len(names) > 1:
        variable += " (also " + ", ".join(f"`{name}`" for name in names[1:]) + ")"
    description = _cell(info.description or "")
    return f"| {variable} | {_type_text(info.annotation)} | {_default_text(info)} | {description} |"


def _fields_in_order() -> list[FieldInfo]:
    """``settings.py``'s own fields in its order (grouped there by concept), then its bases'."""
    fields = Settings.model_fields
    own = [name for name in Settings.__annotations__ if name in fields]
    rest = [name for name in fields if name not in own]
    return [fields[name] for name in [*own, *rest]]


def render() -> str:
    """The whole page, as committed."""
    missing = [
        aliases(info.validation_alias)[0] for info in _fields_in_order() if not info.description
    ]
    if missing:
        raise ValueError(f"settings without a description: {', '.join(missing)}")
    return _INTRO + "\n".join(_row(info) for info in _fields_in_order()) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--output", type=Path, default=PAGE, help=f"where to write (default: {PAGE})"
    )
    args = parser.parse_args(argv)
    args.output.write_text(render(), encoding="utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

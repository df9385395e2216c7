"""Where settings come from: the process environment, then ``<home>/.env.executive``.

Also the error that names every bad variable with its value, its reason and its source,
and the variable names themselves (a field's ``validation_alias``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from pydantic import AliasChoices, BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from executive.home import Home

ENV_FILE_NAME = ".env.executive"

# Variables in our namespaces that are read outside the settings, so a process environment
# holding one is no typo. ``tests/config/test_sources.py`` finds every such name the code,
# the deploy files and the docs use, and fails on one that is neither a setting nor here.
READ_ELSEWHERE = {
    "EXECUTIVE_HOME": "the agent home, read before any setting (resolve_home)",
    "EXECUTIVE_MODELS_DIR": "where the embedding model is (memory/store/embedder.py)",
}


def alias(*names: str) -> Any:
    """A field's variable: one name, or several where an older name still works."""
    return AliasChoices(*names) if len(names) > 1 else names[0]


def aliases(alias: Any) -> list[str]:
    """The variable names of a field's ``validation_alias``, the preferred first."""
    names = alias.choices if isinstance(alias, AliasChoices) else [alias]
    return [str(name) for name in names if name is not None]


class SettingsError(Exception):
    """Configuration that cannot start the daemon. ``problems`` holds (variable, value, why);
    ``sources`` says where each value came from, so the operator edits the right place (the
    environment wins over the file: editing the file would change nothing)."""

    def __init__(
        self, problems: list[tuple[str, str, str]], sources: Mapping[str, str] | None = None
    ) -> None:
        self.problems = problems
        self.sources = dict(sources or {})
        super().__init__(self.render())

    def render(self) -> str:
        lines = ["invalid configuration:"]
        for variable, value, why in self.problems:
            if variable == "configuration":  # a rule across variables: its reason names them
                lines.append(f"  {why}")
                continue
            source = self.sources.get(variable)
            where = f" (from {source})" if source else ""
            lines.append(f"  {variable}={value!r}{where}: {why}")
        return "\n".join(lines)


def resolve_home(home: Path | None = None) -> Path:
    """The agent home: an explicit argument, then EXECUTIVE_HOME / AGENT_PATH, then the cwd."""
    if home is None:
        chosen = os.environ.get("EXECUTIVE_HOME") or os.environ.get("AGENT_PATH")
        home = Path(chosen) if chosen else Path.cwd()
    return home.expanduser().resolve()


class Sources(BaseSettings):
    """Loading :class:`executive.settings.Settings`, whose fields say which variables exist:
    class methods, which read the fields of the class they are called on without importing it
    (``executive.settings`` exports them under their usual names)."""

    @classmethod
    def load(cls, home: Path | None = None, **overrides: Any) -> Self:
        """Read the environment and ``<home>/.env.executive`` (the environment wins); raises
        :class:`SettingsError` naming every bad variable, its value and why."""
        root = resolve_home(home)
        env_file = Home(root).env_file
        try:
            return cls(
                _env_file=env_file if env_file.is_file() else None,
                home=root,
                **overrides,
            )
        except ValidationError as exc:
            raise SettingsError(_problems(cls, exc), cls.value_sources(env_file)) from None

    @classmethod
    def value_sources(cls, env_file: Path) -> dict[str, str]:
        """Where each variable with a value gets it: ``environment`` or the env file's path
        (the others take their default; an empty value is unset, as everywhere)."""
        from dotenv import dotenv_values  # pydantic-settings' own reader of env files

        in_file = dotenv_values(env_file) if env_file.is_file() else {}
        sources: dict[str, str] = {}
        for name in cls.variable_names():
            if os.environ.get(name):
                sources[name] = "environment"
            elif in_file.get(name):
                sources[name] = str(env_file)
        return sources

    @classmethod
    def variable_names(cls) -> list[str]:
        """Every environment variable the daemon reads, in declaration order."""
        return [
            name for info in cls.model_fields.values() for name in aliases(info.validation_alias)
        ]


def _problems(model: type[BaseModel], exc: ValidationError) -> list[tuple[str, str, str]]:
    problems = []
    for err in exc.errors(include_url=False):
        reason = err["msg"].removeprefix("Value error, ")
        if not err["loc"]:
            # Model-level rules name their variables in the message itself.
            problems.append(("configuration", "", reason))
            continue
        variable, info = _field(model, str(err["loc"][0]))
        secret = info is not None and info.annotation in (SecretStr | None, SecretStr)
        problems.append((variable, "***" if secret else _short(err.get("input")), reason))
    return problems


def _field(model: type[BaseModel], loc: str) -> tuple[str, FieldInfo | None]:
    """The variable an error's ``loc`` (a variable or a field's name) is, and its field."""
    for name, info in model.model_fields.items():
        names = aliases(info.validation_alias)
        if loc in names:
            return loc, info
        if loc == name:
            return (names[0] if names else loc), info
    return loc, None


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

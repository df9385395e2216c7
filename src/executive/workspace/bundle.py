"""A goal bundle: a folder whose ``PROMPT.md`` holds YAML frontmatter and the goal in prose.

Every key, with an example, is in ``docs/bundles.md``. Unknown keys are errors: a misspelt
``verifers`` must not silently drop the checks.

Intake never hangs or balloons on a hostile bundle: the folder must be a real folder (not a
symbolic link), ``PROMPT.md`` a regular file of at most ``max_prompt_bytes``
(``EXECUTIVE_BUNDLE_PROMPT_MAX_BYTES``), and the frontmatter passes
:func:`executive.files.parse_yaml`'s limits (``FRONTMATTER_MAX_BYTES``,
``FRONTMATTER_MAX_DEPTH`` levels: a valid bundle needs three). Whatever the text, reading it
either gives a bundle or raises :class:`BundleError`, so one bundle can never fail the loop.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from executive.files import UnsafeFile, YamlLimitError, parse_yaml, read_text
from executive.memory.taxonomy import slugify, valid_app_id

Priority = Literal["P0", "P1", "P2", "P3", "P4"]
PROMPT_FILE = "PROMPT.md"
PROMPT_MAX_BYTES = 256 * 1024
# A frontmatter of a hundred steps with a paragraph each fits in well under this.
FRONTMATTER_MAX_BYTES = 64 * 1024
FRONTMATTER_MAX_DEPTH = 8
SLOW_FACTOR = 2.0  # a step that took over this many times its estimate is a slow one
PLACEHOLDERS = ("prompt_file", "output_dir", "bundle_dir", "step", "attempt")
_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)(.*)\Z", re.DOTALL)


class BundleError(ValueError):
    """A bundle that cannot run. The message names the file and what is wrong."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CommandVerifier(_Model):
    run: str
    name: str | None = None
    timeout_seconds: float = Field(120, gt=0)

    @property
    def label(self) -> str:
        return self.name or self.run


class OutputExists(_Model):
    builtin: Literal["output_exists"]
    path: str = "."

    @property
    def label(self) -> str:
        return f"output_exists:{self.path}"


class GitStatusClean(_Model):
    builtin: Literal["git_status_clean"]

    @property
    def label(self) -> str:
        return "git_status_clean"


Verifier = CommandVerifier | OutputExists | GitStatusClean


class StepSpec(_Model):
    title: str = Field(min_length=1)
    prompt: str = ""
    estimated_seconds: float | None = Field(None, gt=0)
    estimated_turns: int | None = Field(None, gt=0)


class Frontmatter(_Model):
    title: str = Field(min_length=1)
    priority: Priority = "P3"
    vendor: Literal["claude", "command"] | None = None
    command: list[str] | None = None
    verifiers: list[Annotated[Verifier, Field(union_mode="left_to_right")]] = Field(
        default_factory=list
    )
    max_attempts: int | None = Field(None, ge=1)
    timeout_seconds: float | None = Field(None, gt=0)
    max_turns: int | None = Field(None, ge=1)
    model: str | None = None
    app_id: str | None = None
    steps: list[StepSpec] = Field(default_factory=list)

    @field_validator("command", mode="before")
    @classmethod
    def _argv(cls, value: Any) -> Any:
        # A string is split like a shell would, without running one.
        return shlex.split(value) if isinstance(value, str) else value

    @field_validator("command")
    @classmethod
    def _known_placeholders(cls, value: list[str] | None) -> list[str] | None:
        for arg in value or []:
            for name in re.findall(r"\{(\w+)\}", arg):
                if name not in PLACEHOLDERS:
                    raise ValueError(
                        f"unknown placeholder {{{name}}}; known: {', '.join(PLACEHOLDERS)}"
                    )
        if value is not None and not value:
            raise ValueError("must not be empty")
        return value

    @field_validator("app_id")
    @classmethod
    def _app_id(cls, value: str | None) -> str | None:
        if value is not None and not valid_app_id(value):
            raise ValueError("must be a lowercase-kebab slug, _global, _executive or _skill-<slug>")
        return value

    @model_validator(mode="after")
    def _command_for_command_vendor(self) -> Frontmatter:
        if self.vendor == "command" and not self.command:
            raise ValueError("vendor 'command' needs a command (an argv list or a string)")
        return self


class Bundle(BaseModel):
    """A parsed, valid bundle. ``folder`` is where it lives now."""

    model_config = ConfigDict(frozen=True)

    slug: str
    folder: Path
    spec: Frontmatter
    goal: str

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def app_id(self) -> str:
        return self.spec.app_id or self.slug

    @property
    def steps(self) -> list[StepSpec]:
        return self.spec.steps or [StepSpec(title=self.spec.title)]

    def vendor(self, default: str) -> str:
        # A bundle that names a command but no vendor means the command vendor.
        return self.spec.vendor or ("command" if self.spec.command else default)


def split_frontmatter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    match = _FRONTMATTER.match(text)
    if not match:
        raise BundleError(f"{path}: no YAML frontmatter (a '---' block at the top)")
    try:
        data = parse_yaml(
            match.group(1), max_bytes=FRONTMATTER_MAX_BYTES, max_depth=FRONTMATTER_MAX_DEPTH
        )
    except YamlLimitError as exc:
        raise BundleError(f"{path}: the frontmatter is refused: {exc}") from None
    if not isinstance(data, dict):
        raise BundleError(f"{path}: the frontmatter must be a YAML mapping")
    return data, match.group(2).strip()


def check_folder(folder: Path) -> None:
    """A bundle folder is a real folder: a symbolic link could point anywhere on the machine."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise BundleError(f"{folder}: unreadable: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise BundleError(f"{folder}: the bundle folder is a symbolic link; it is not followed")
    if not stat.S_ISDIR(info.st_mode):
        raise BundleError(f"{folder}: not a folder")


def problems(exc: ValidationError, whole: str = "frontmatter", most: int | None = None) -> str:
    """Every bad field (or the first ``most``) of a front matter or a ``whole``, in one line."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or whole}: "
        + err["msg"].removeprefix("Value error, ")
        for err in exc.errors(include_url=False)[:most]
    )


def load(
    folder: Path, *, default_vendor: str = "claude", max_prompt_bytes: int = PROMPT_MAX_BYTES
) -> Bundle:
    """Parse ``folder/PROMPT.md``. Raises :class:`BundleError` naming the file and error."""
    check_folder(folder)
    path = folder / PROMPT_FILE
    try:
        text = read_text(path, max_prompt_bytes)
    except FileNotFoundError:
        raise BundleError(f"{path}: missing (a bundle is a folder with a PROMPT.md)") from None
    except UnsafeFile as exc:
        raise BundleError(f"{path}: refused: {exc}") from None
    except OSError as exc:
        raise BundleError(f"{path}: unreadable: {exc}") from None
    data, goal = split_frontmatter(text, path)
    try:
        spec = Frontmatter.model_validate(data)
    except ValidationError as exc:
        raise BundleError(f"{path}: {problems(exc)}") from None
    bundle = Bundle(slug=slugify(folder.name), folder=folder, spec=spec, goal=goal)
    if bundle.vendor(default_vendor) == "command" and not spec.command:
        raise BundleError(f"{path}: vendor 'command' (WORKER_VENDOR) needs a command")
    return bundle


def render(spec: Frontmatter, goal: str) -> str:
    """A PROMPT.md for ``spec`` (what ``executive bundle add`` writes)."""
    data = spec.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    data = {"title": spec.title, "priority": spec.priority, **data}
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).strip()
    return f"---\n{front}\n---\n{goal.strip()}\n"

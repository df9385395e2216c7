"""True/false settings, read by their variable's name, and the one answer to "is memory on?".

The hooks' flags are declared with the hooks (:mod:`executive.hookspecs`); their fields are
made here from that declaration, so no flag is spelled twice.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, create_model
from pydantic_settings import BaseSettings

from executive.config.sources import aliases
from executive.hookspecs import SPECS

# Why memory does nothing, in the words every gate (hooks, `executive mem`, jobs) reports.
MEMORY_OFF = "V3_MEMORY_ENABLED off"


def _parse_flag(value: Any) -> Any:
    # The original compares against the string "true"; anything else was silently off.
    # We accept true/false in any case and refuse the rest, so a typo is an error, not "off".
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise ValueError("must be true or false")


Flag = Annotated[bool, BeforeValidator(_parse_flag)]


# The master switch, then one flag per hook (``hook_post_run`` ...), off unless set, each
# read from the variable its declaration names. A base of the settings of its own, so the
# configuration reference lists them together.
MemorySwitches: type[BaseSettings] = create_model(
    "MemorySwitches",
    __base__=BaseSettings,
    __module__=__name__,
    # None means unset: hooks treat it as off, the `executive mem` surface as on (as the
    # original's runner and CLI did).
    memory_enabled=(
        Flag | None,
        Field(
            None,
            validation_alias="V3_MEMORY_ENABLED",
            description="master switch for memory; hooks run only when this is true",
        ),
    ),
    **{
        spec.field: (Flag, Field(False, validation_alias=spec.flag, description=spec.description))
        for spec in SPECS.values()
    },
)


@cache
def flag_fields(model: type[BaseModel]) -> dict[str, str]:
    """Environment variable -> field, for every plain true/false setting of ``model``."""
    return {
        variable: name
        for name, info in model.model_fields.items()
        if info.annotation is bool
        for variable in aliases(info.validation_alias)
    }


class MemoryGates:
    """Flags by name, and whether memory is on: the one place that decides; every gate asks."""

    if TYPE_CHECKING:  # the master switch, a field MemorySwitches declares
        memory_enabled: bool | None

    def flag(self, variable: str) -> bool:
        """The true/false setting read from ``variable``: a hook's flag is read by its name, so
        settings know no hook."""
        try:
            return bool(getattr(self, flag_fields(type(self))[variable]))
        except KeyError:
            raise KeyError(f"{variable} is not a true/false setting") from None

    @property
    def hooks_master_on(self) -> bool:
        """The runner's reading of the master switch: unset is off."""
        return self.memory_enabled is True

    @property
    def surface_memory_on(self) -> bool:
        """The `executive mem` surface's reading: only an explicit false disables it."""
        return self.memory_enabled is not False

    def hook_off(self, flag: str) -> str | None:
        """Why a hook switched by ``flag`` may not run, or None when it may (the runner's gate)."""
        if not self.hooks_master_on:
            return MEMORY_OFF
        return None if self.flag(flag) else f"{flag} off"

    @property
    def surface_off(self) -> str | None:
        """Why the `executive mem` surface and its scheduled jobs do nothing, or None."""
        return None if self.surface_memory_on else MEMORY_OFF

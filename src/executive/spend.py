"""What one paid run cost, as the Claude Code CLI itself reported it.

The CLI's closing ``result`` line (stream-json, and the SDK's ``ResultMessage`` that the LLM
skill engine reads) carries ``total_cost_usd``, ``usage`` (input, output, cache read and cache
creation tokens), ``num_turns`` and ``duration_api_ms``. :func:`of_result` reads them; a run
without a result line has no :class:`Spend` at all ("not reported", never 0).

The work ledger keeps it as :meth:`Spend.record` (the memory pack's tokens beside the run's
input), read back by :func:`of_record` for :mod:`executive.workspace.spending`'s totals. Every
value here came from a worker's or a model's output: read, bounded and typed, never trusted
to be sane (a negative or non-finite figure is not a figure).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

# The token counts a run reports: each direction, as the ledger, status and /metrics name it
# (in the order they show them), and the key of its count in the CLI's ``usage``.
_USAGE = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cache_read": "cache_read_input_tokens",
    "cache_write": "cache_creation_input_tokens",
}
DIRECTIONS = tuple(_USAGE)
TOKENS = tuple(f"{d}_tokens" for d in DIRECTIONS)  # the token figures of a Spend
MAX_USD = 1_000_000.0  # no single run costs this: a figure past it is not believed
MAX_COUNT = 10**12


@dataclass(frozen=True)
class Spend:
    """One run's figures (or a sum of runs'). ``cost_usd`` in US dollars."""

    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    turns: int = 0
    api_ms: int = 0

    def of(self, names: Iterable[str]) -> dict[str, Any]:
        """The named figures (cost in dollars to the micro-dollar, as the ledger keeps it)."""
        return {n: round(self.cost_usd, 6) if n == "cost_usd" else getattr(self, n) for n in names}

    def __add__(self, other: Spend) -> Spend:
        return Spend(*(getattr(self, n) + getattr(other, n) for n in _FIGURES))

    def record(self, pack_tokens: int | None = None) -> dict[str, Any]:
        """The ledger's form: the figures, and the pack's tokens (memory's share of input)."""
        return {"reported": True, **self.of(_FIGURES), **_pack(pack_tokens)}


# Spend's fields in order, read once: the summary adds a run's figures for every run it folds.
_FIGURES = tuple(f.name for f in fields(Spend))
_COUNTS = tuple(n for n in _FIGURES if n != "cost_usd")  # whole numbers


def logged(spend: Spend | None, *, paid: bool) -> dict[str, Any]:
    """A run's log-line field: ``cost_usd`` of a paid run (null: not reported), none else."""
    return {"cost_usd": spend.cost_usd if spend is not None else None} if paid else {}


def not_reported(pack_tokens: int | None = None) -> dict[str, Any]:
    """The ledger's form of a paid run that ended without its result line."""
    return {"reported": False, **_pack(pack_tokens)}


def _pack(tokens: int | None) -> dict[str, Any]:
    return {} if tokens is None else {"pack_tokens": tokens}


def _figure(value: object, limit: float = MAX_USD) -> float | None:
    """A non-negative finite number of at most ``limit``; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and 0 <= number <= limit else None


def _count(value: object) -> int:
    return int(_figure(value, MAX_COUNT) or 0)


def of_result(
    cost: object, usage: object = None, turns: object = None, api_ms: object = None
) -> Spend | None:
    """A result's figures; None when it names no cost (then the run's spend is not reported)."""
    usd = _figure(cost)
    if usd is None:
        return None
    counts = usage if isinstance(usage, Mapping) else {}
    return Spend(
        cost_usd=usd,
        **{f"{d}_tokens": _count(counts.get(key)) for d, key in _USAGE.items()},
        turns=_count(turns),
        api_ms=_count(api_ms),
    )


def of_line(line: Mapping[str, Any]) -> Spend | None:
    """The figures of a stream-json ``result`` line."""
    keys = ("total_cost_usd", "usage", "num_turns", "duration_api_ms")
    return of_result(*(line.get(key) for key in keys))


def of_record(value: object) -> Spend | None:
    """A ledger record's ``spend`` read back; None when it was not reported (or is not one)."""
    if not isinstance(value, Mapping) or value.get("reported") is not True:
        return None
    usd = _figure(value.get("cost_usd"))
    return None if usd is None else Spend(usd, **{n: _count(value.get(n)) for n in _COUNTS})


def usd(amount: float | None) -> str:
    """A figure as the operator reads it: ``$0.0123``; ``not reported`` for None."""
    if amount is None:
        return "not reported"
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"


_BARS = "▁▂▃▄▅▆▇█"


def chart(values: list[float]) -> str:
    """A small bar chart of ``values``, one character each (the largest a full block)."""
    top = max(values, default=0.0)
    if top <= 0:
        return _BARS[0] * len(values)
    last = len(_BARS) - 1
    return "".join(_BARS[min(last, int(v / top * last + 0.5))] for v in values)

"""Several executives, one memory: the union of their homes' harvest ledgers.

Executives that share a store (``EXECUTIVE_STORE=postgres`` on one database) each keep their
own home, queue and ledgers. Each ledger says only what its own executive wrote, so a
rebuild or a drift check from one home must read them all: ``EXECUTIVE_PEER_HOMES`` lists
the other homes, and :class:`SharedLedgers` folds every home's lines in time order, as if
one ledger had recorded them. Each key remembers the home whose line it came from last,
so a drift report can say which home a difference belongs to.

Peer homes are read, never written: a rebuild or a drift fix from one home writes only to
the store (and, for the deletions a fix makes, its own ledger).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from executive.config.derived import default_executive_name
from executive.config.rules import split
from executive.config.sources import ENV_FILE_NAME
from executive.home import Home
from executive.memory.write.ledger import HarvestLedger, KeyState, LedgerState, fold


@dataclass(frozen=True)
class Member:
    """One executive of the group: its home and the name it stamps on its memories."""

    home: Path
    name: str
    # Its EXECUTIVE_SPEC_FILES: with constitution.md, the files its principles come from.
    spec_files: tuple[str, ...] = ()

    @property
    def ledger(self) -> HarvestLedger:
        return HarvestLedger(Home(self.home).harvest_runs)


def member(home: Path) -> Member:
    """A peer home as a member: its EXECUTIVE_NAME and EXECUTIVE_SPEC_FILES from its own
    ``.env.executive``.

    Read from the file, not through this process's settings: this process's environment
    names this executive, not the peer.
    """
    from dotenv import dotenv_values

    path = home / ENV_FILE_NAME
    values = dotenv_values(path) if path.is_file() else {}
    return Member(
        home,
        default_executive_name(home, values.get("EXECUTIVE_NAME") or None),
        tuple(split(values.get("EXECUTIVE_SPEC_FILES") or "")),
    )


class SharedLedgers:
    """What :class:`HarvestLedger` offers the rebuild tools, over every member's ledger."""

    def __init__(self, members: Sequence[Member]) -> None:
        self.members = list(members)

    def files(self) -> list[Path]:
        return [path for m in self.members for path in m.ledger.files()]

    def entries(self) -> Iterator[dict[str, Any]]:
        """Every line of every home, in time order; each stays in its own home's order."""

        def tagged(m: Member) -> Iterator[dict[str, Any]]:
            for entry in m.ledger.entries():
                yield {**entry, "home": str(m.home)}

        return heapq.merge(*(tagged(m) for m in self.members), key=lambda e: str(e.get("ts", "")))

    def state(self) -> LedgerState:
        return fold(self.entries())

    def owner(self, state: KeyState | None, executive: Any = None) -> str:
        """The home a drift belongs to: the one whose ledger line the key's state came from,
        or, for a memory no ledger holds, the home of the executive that stamped it."""
        if state is not None and state.home:
            return state.home
        for m in self.members:
            if m.name == executive:
                return str(m.home)
        return f"unknown (executive {executive})" if executive else "unknown"

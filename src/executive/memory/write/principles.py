"""A principle exists only while a trusted file says it.

The constitution sync (backfill lane A) turns each numbered rule of ``constitution.md`` and
of the configured spec files into a principle. What the sync would write *now*, from those
files, is the only proof that a principle may exist: rebuild, restore and drift admit a
principle from a ledger line or a snapshot entry only when it is one of these rules. A
ledger line is data (whoever can append to the file can write ``"actor": "backfill:A"``),
and so is a snapshot; neither proves anything about itself.

A rule is compared on what the sync derives from the file (text, app id, type, category,
importance, confidence, trigger, source, tags), never on what a writer stamps (user id,
env, cohort, executive, run id, dates): executives sharing a store each stamp their own, and
a sync on another day writes the same rule under another run id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from executive.memory.write.fields import Rejection

# What lane A writes of a rule, besides its text and app id (``corpus/backfill.py``).
_RULE_FIELDS = ("type", "category", "importance", "confidence", "trigger", "source", "tags")


def _frozen(value: Any) -> Any:
    """A JSON value as a hashable one; a number as a float (1 and 1.0 are the same rule)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    return repr(value)


def identity(payload: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What makes a payload this rule and no other; None for a payload with no metadata."""
    meta = payload.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    app_id = payload.get("app_id", meta.get("app_id"))
    return (
        _frozen(payload.get("text")),
        _frozen(app_id),
        *(_frozen(meta.get(name)) for name in _RULE_FIELDS),
    )


@dataclass(frozen=True)
class TrustedRules:
    """The principles the trusted files hold now, as the constitution sync writes them."""

    rules: frozenset[tuple[Any, ...]]
    # The files read, for the reason a refusal gives (a peer's prefixed by its home).
    files: tuple[str, ...] = ()

    @classmethod
    def of(cls, payloads: Iterable[Mapping[str, Any]], files: Iterable[str] = ()) -> TrustedRules:
        """From lane A's payloads (stamped or not: stamps are not part of a rule)."""
        found = (identity(p) for p in payloads)
        return cls(frozenset(i for i in found if i is not None), tuple(files))

    def holds(self, payload: Mapping[str, Any]) -> bool:
        return identity(payload) in self.rules

    def refusal(self) -> Rejection:
        read = ", ".join(self.files) or "none could be read"
        return Rejection(
            "metadata.type",
            f"a principle no trusted file holds now (read: {read}); principles come only "
            "from constitution.md and the configured spec files, never from a ledger's or "
            "a snapshot's own claim",
        )


NO_RULES = TrustedRules(frozenset())

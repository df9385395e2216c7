"""How the reader turns what came back into its next question (the hop).

The store ranks by similarity and never walks from one fact to a related one, so the next
question names what the last answers mentioned and the question did not: identifiers (bundle
slugs, error codes, paths, run ids) and proper names. Still a full sentence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from executive.memory.store.base import MemoryRecord

MAX_ENTITIES = 3
_FROM_TOP = 3

_IDENTIFIER = re.compile(
    r"""
    \b\d{4}-\d{2}-\d{2}-[a-z0-9-]+\b          # run ids
  | \b[A-Z][A-Z0-9_]{3,}\b                      # error codes, SCREAMING_SNAKE
  | \b[a-z0-9]+(?:-[a-z0-9]+)+\b                # kebab-case slugs
  | (?:[\w.-]+/)+[\w.-]+                        # paths
  | \b[\w-]+\.(?:py|js|ts|md|json|ya?ml|toml|sh|html|css)\b
  | \b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b          # proper names
    """,
    re.VERBOSE,
)
# Capitalised words that start sentences or are too common to be worth a hop.
_COMMON_WORDS = """
The A An And But Or If When What Which Who How Why Where This That These Those It Its In On
At For From With By To Of As Is Was Are Were Be Been Do Did Does Not No Yes We You I He She
They My Your Our Their Then Than So Also Just Step Run Bundle Memory Never Always After
Before During Yesterday Today Tomorrow Hey Hi Oh Yeah Thanks Thank Wow
"""
_COMMON = frozenset(_COMMON_WORDS.split())


def entities(text: str) -> list[str]:
    found = []
    for match in _IDENTIFIER.finditer(text):
        token = match.group(0).strip()
        if token in _COMMON or len(token) < 3:
            continue
        found.append(token)
    return found


def refinement(
    topic: str,
    question: str,
    ranked: Sequence[MemoryRecord],
    asked: Iterable[str],
    identifiers: Sequence[str] = (),
) -> str | None:
    """The next question, or None when the results mention nothing new."""
    seen = " ".join([*asked, question, *identifiers]).lower()
    counts: Counter[str] = Counter()
    for record in ranked[:_FROM_TOP]:
        for token in dict.fromkeys(entities(record.text)):
            if token.lower() not in seen:
                counts[token] += 1
    if not counts:
        return None
    picked = [token for token, _ in counts.most_common(MAX_ENTITIES)]
    named = picked[0] if len(picked) == 1 else ", ".join(picked[:-1]) + f" and {picked[-1]}"
    return f"What else do we know about {named}, in connection with {topic}?"

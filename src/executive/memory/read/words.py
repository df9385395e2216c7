"""The one tokenizer: a text's words, their normal forms and stems, the stop words.

The lexical index's terms, the reader's refinements and the harvester's near-duplicate check
all read words here. English-only heuristics: a small stop list and a small suffix stripper;
identifiers with ``-``, ``_`` or ``.`` stay whole.
"""

from __future__ import annotations

import functools
import re

# One string, as the harvester's filler words are: a list literal would take a line a word.
_STOP_WORDS = (
    "a about above after again against all am an and any are as at be because been before "
    "being below between both but by can cannot could did do does doing done down during each "
    "few for from further had has have having he her here hers herself him himself his how i "
    "if in into is it its itself just me more most my myself no nor not now of off on once "
    "only or other our ours ourselves out over own same she should so some such than that the "
    "their theirs them themselves then there these they this those through to too under until "
    "up very was we were what when where which while who whom why will with would you your "
    "yours yourself yourselves kind kinds type types thing things much many likely also ever "
    "get got i'm i've it's let's that's there's they're we're what's who's you're don't "
    "doesn't didn't isn't wasn't can't won't hey hi hello yeah yes yep wow oh ok okay thanks "
    "thank cool awesome great nice really pretty sure gonna wanna totally definitely "
    "absolutely amazing glad sounds sound like lot lots stuff always"
)
STOP_WORDS = frozenset(_STOP_WORDS.split())

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'\-.]*[A-Za-z0-9]|[A-Za-z0-9]")
_SUFFIXES = (
    ("ational", 5),
    ("ization", 5),
    ("ingly", 4),
    ("edly", 4),
    ("ings", 4),
    ("ing", 4),
    ("ies", 3),
    ("ied", 3),
    ("ers", 4),
    ("er", 4),
    ("ed", 4),
    ("es", 4),
    ("ly", 4),
    ("s", 3),
)
_ENDINGS = frozenset(suffix[-1] for suffix, _ in _SUFFIXES)


# A pure function of the word, called for every word of every text a scope indexes; the
# vocabulary is small beside the word count, so a first index build is mostly cache hits.
@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """researching → research, paintings → paint, running → run; identifiers mostly intact."""
    if word[-1:] not in _ENDINGS:  # most words no suffix can match: ids, numbers, "deploy"
        return word
    for suffix, minimum in _SUFFIXES:
        if (
            word.endswith(suffix)
            and len(word) - len(suffix) >= minimum - 1
            and len(word) > len(suffix) + 2
        ):
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]
            return base
    return word


@functools.lru_cache(maxsize=65_536)
def normal(surface: str) -> str:
    lowered = surface.lower().strip("'")
    return lowered[:-2] if lowered.endswith("'s") else lowered


# What a surface form indexes as (None: a stop word or a single letter). The same few
# thousand surface forms recur in every text, so a first index build of a scope is mostly one
# cache lookup per word.
@functools.lru_cache(maxsize=65_536)
def _term(surface: str) -> str | None:
    lowered = normal(surface)
    return stem(lowered) if len(lowered) >= 2 and lowered not in STOP_WORDS else None


def words(text: str) -> list[tuple[str, str]]:
    """(surface, term) for each content word; the term is lower case and stemmed."""
    found = [(surface, _term(surface)) for surface in WORD.findall(text)]
    return [(surface, term) for surface, term in found if term is not None]


def terms(text: str) -> list[str]:
    found = map(_term, WORD.findall(text))
    return [term for term in found if term is not None]

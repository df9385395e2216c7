"""How the pack counts tokens, without the worker model's tokenizer (none ships offline).

Claude's tokenizer is a byte-pair encoding that splits text into words, numbers and runs of
punctuation before it merges bytes, so the estimate counts the same pieces, each at a rate a
little above what that tokenizer gives it: a run of ASCII letters one token per 6 letters (a
common word is one token, a long or rare one several), digits one per 3, a run of ASCII
punctuation one per 2, a newline one, a run of two or more blanks one (a single space rides
on the word after it), and any other character (non-ASCII, control) one each.

Calibrated on the development data against Anthropic's published tokenizer
(``@anthropic-ai/tokenizer``, whose README calls it a rough approximation for Claude 3 and
later), in packs of 25 texts (``bench/tokens.py``): LoCoMo's conversation turns (4.2
characters a token) count 1.07-1.15 times the tokenizer's figure, pieces of coding-agent
transcripts (tracebacks, diffs, paths; 3.3 characters a token) 1.06-1.23 times. So the
2,000-token cap holds with a margin on prose and on code alike. The estimate it replaces
(``ceil(ASCII characters / 3)``) counted prose 1.4 times over, which left a quarter of the
budget unused, and undercounted code-heavy packs by up to 5%. A single short text can still
be undercounted (one in twenty by 3-5% or more); a whole pack is what the cap measures.
"""

from __future__ import annotations

import re

PACK_TOKEN_CAP = 2000

# One alternative per kind of piece, in the order the estimate's docstring gives them.
_PIECES = re.compile(
    r"([A-Za-z]+)|([0-9]+)|([!-/:-@\[-`{-~]+)|(\n)|([ \t\r\f\v]{2,})|( |\t)|(.)", re.S
)
_PER_TOKEN = {1: 6, 2: 3, 3: 2}  # letters, digits, punctuation: characters a token


def _cost(kind: int | None, length: int) -> int:
    per = _PER_TOKEN.get(kind or 0)
    if per is not None:
        return -(-length // per)  # ceiling division
    return 0 if kind == 6 else 1  # a single blank rides on the next word; the rest: one


def estimate(text: str) -> int:
    return sum(
        _cost(piece.lastindex, piece.end() - piece.start()) for piece in _PIECES.finditer(text)
    )


def within(text: str, budget: int) -> int:
    """The length of a prefix of ``text`` that ``estimate`` counts within ``budget``: whole
    pieces while they fit, then as much of the next word, number or punctuation run as the
    room left pays for. One pass, where a bisection on ``estimate`` would make a dozen."""
    used = 0
    for piece in _PIECES.finditer(text):
        kind, start, length = piece.lastindex, piece.start(), piece.end() - piece.start()
        cost = _cost(kind, length)
        if used + cost > budget:
            per = _PER_TOKEN.get(kind or 0)
            # A long word or number may be cut inside: as many characters as the room pays for.
            return start + (min(length, (budget - used) * per) if per is not None else 0)
        used += cost
    return len(text)


def at_least(text: str) -> int:
    """A lower bound on ``estimate(text)``, in C-speed string calls: every character but a
    blank is a letter (6 to a token) at best."""
    return (len(text) - text.count(" ")) // 6

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
from itertools import islice

PACK_TOKEN_CAP = 2000

# Each match is one token, as counted above: counting matches counts tokens in C (a Python
# loop over the pieces was most of a pack's rendering).
_TOKENS = re.compile(
    r"[A-Za-z]{1,6}|[0-9]{1,3}|[!-/:-@\[-`{-~]{1,2}|\n|[ \t\r\f\v]{2,}|[^A-Za-z0-9!-/:-@\[-`{-~\n \t]"
)


def estimate(text: str) -> int:
    return len(_TOKENS.findall(text))


def within(text: str, budget: int) -> int:
    """The length of a prefix of ``text`` that ``estimate`` counts within ``budget``: whole
    tokens while they fit (a long word, number or punctuation run may be cut inside), so a
    cut prefix uses the whole budget."""
    if budget <= 0:
        return 0
    last = next(islice(_TOKENS.finditer(text), budget - 1, budget), None)
    return len(text) if last is None else last.end()


def at_least(text: str) -> int:
    """A lower bound on ``estimate(text)``, in C-speed string calls: every character but a
    blank is a letter (6 to a token) at best."""
    return (len(text) - text.count(" ")) // 6

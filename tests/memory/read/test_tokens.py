from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from executive.memory.read.tokens import at_least, estimate, within

TEXT = st.text(alphabet=st.sampled_from(list("abcXYZ0189 \n\t.,:`#()[]_/-é漢")), max_size=300)


def test_pieces_cost_what_the_module_says():
    assert estimate("") == 0
    assert estimate("hello world!") == 3  # Anthropic's tokenizer: 3 as well
    assert estimate("abcdef") == 1 and estimate("abcdefg") == 2  # 6 letters a token
    assert estimate("2026") == 2  # 3 digits a token
    assert estimate("```") == 2 and estimate("->") == 1  # 2 punctuation characters a token
    assert estimate("a b") == 2 and estimate("a  b") == 3  # a run of blanks costs one
    assert estimate("a\n\nb") == 4 and estimate("é漢") == 2  # newlines, non-ASCII: one each


@given(TEXT, st.integers(min_value=0, max_value=200))
def test_a_prefix_within_a_budget_fits_it_and_uses_all_of_it_when_cut(text, budget):
    end = within(text, budget)
    assert estimate(text[:end]) <= budget
    if end < len(text):
        assert estimate(text[:end]) == budget  # cut only when the room is used up


@given(TEXT)
def test_the_lower_bound_is_one(text):
    assert at_least(text) <= estimate(text)


def _by_pieces(text: str) -> int:
    """The estimate as its docstring states it, piece by piece: the reference."""
    pieces = re.finditer(
        r"([A-Za-z]+)|([0-9]+)|([!-/:-@\[-`{-~]+)|(\n)|([ \t\r\f\v]{2,})|( |\t)|(.)", text, re.S
    )
    per = {1: 6, 2: 3, 3: 2}
    total = 0
    for piece in pieces:
        kind, length = piece.lastindex, len(piece.group())
        total += -(-length // per[kind]) if kind in per else (0 if kind == 6 else 1)
    return total


@given(st.text(max_size=300) | TEXT)
def test_the_estimate_counts_what_the_pieces_say(text):
    assert estimate(text) == _by_pieces(text)

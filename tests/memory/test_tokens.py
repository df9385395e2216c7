from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from executive.memory.tokens import at_least, estimate, within

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

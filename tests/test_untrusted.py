from __future__ import annotations

from executive.untrusted import clip, ending, opening


def test_an_opening_keeps_the_start_and_cuts_after_a_sentence():
    text = "Failure of bundle b at step 1, attempt 3 of 3. " + "Earlier failures: 2. " * 40
    cut = opening(text, 200)
    assert cut.startswith("Failure of bundle b at step 1, attempt 3 of 3.")
    assert cut.endswith("2. …") or cut.endswith(". …")
    assert len(cut) <= 202
    assert opening("short", 200) == "short"
    words = opening("word " * 100, 50)
    assert words.endswith("word …") and len(words) <= 52


def test_a_clip_keeps_text_that_fits_and_marks_a_cut_within_the_limit():
    assert clip("twelve chars", 12) == "twelve chars"
    assert clip("thirteen char", 12) == "thirteen ch…"
    assert clip("a cut at a space", 7) == "a cut…"  # no space left before the mark
    assert all(len(clip("x" * n, 10)) <= 10 for n in range(30))


def test_an_ending_starts_at_a_word_and_keeps_within_the_limit():
    text = "memory says: " + " ".join(f"lesson{n:03d}" for n in range(100))
    tail = ending(text, 400)
    assert len(tail) <= 400 and tail.startswith("… lesson")
    assert text.endswith(tail.removeprefix("… "))
    assert ending("short", 400) == "short"
    # Cut right before a word: that word starts the tail, whole.
    assert ending("aaaa bbbb cccc", 11) == "… bbbb cccc"
    # One word longer than half the limit: cut inside it all the same.
    assert ending("x" * 30, 10) == "… " + "x" * 8

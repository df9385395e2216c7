"""One declaration of what a run leaves in memory, read by both engines."""

from __future__ import annotations

from executive.hooks import skills
from executive.hooks.builtin.post_run import decide
from executive.hooks.harvest import RUN_HARVEST
from executive.hookspecs import SPECS, HookName
from executive.workers.record.experience import Experience, FileChange
from tests.hooks.builtin.test_post_run import overfull_run
from tests.hooks.conftest import description, post_run


def test_the_llm_skill_says_the_declared_figures_and_every_lesson_rule():
    text = skills.render(HookName.POST_RUN, {}, mem_command="mem")
    h = RUN_HARVEST
    assert f"write it, 0 to {h.max_writes} memories" in text
    assert f"(episodic, confidence {h.card_confidence})" in text
    assert f"at most about\n   {h.card_tokens} tokens" in text
    assert f"(procedural, confidence {h.lesson_confidence})" in text
    assert f"at confidence {h.across_confidence}." in text
    assert f"(confidence {h.note_confidence})" in text
    assert f"more than {h.slow_factor:g} times" in text
    assert f"(at most {h.max_files})" in text
    for rule in h.lesson_rules:
        assert f"   - {rule}\n" in text
    # Where the count is said outside the skill's body, it is the same count.
    assert f"(0-{h.max_writes} writes)" in description(SPECS[HookName.POST_RUN].skill)
    assert f"(0–{h.max_writes} writes)" in SPECS[HookName.POST_RUN].does  # noqa: RUF001


def test_the_built_in_engine_writes_by_the_declared_figures():
    h = RUN_HARVEST
    payloads, notes = decide(overfull_run())
    assert len(payloads) == h.max_writes and notes[0].startswith(f"over the {h.max_writes}-write")
    card, lesson, note = (p["metadata"] for p in payloads)
    assert card["confidence"] == h.card_confidence
    assert lesson["confidence"] == h.lesson_confidence
    assert note["confidence"] == h.note_confidence
    changed = Experience(
        source="stream-json", files=[FileChange(path="app.py", change="modified")], observed=True
    )
    retried = post_run(attempts=2, prior_errors=["KeyError: 'city'"], experience=changed)
    _, across = decide(retried)[0]
    assert across["metadata"]["confidence"] == h.across_confidence

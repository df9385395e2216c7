"""The experience card: one run, as a later worker reads it (Hook C writes one per run).

A pack has room for many runs only when each says what matters in a few lines (aim: 150
tokens), so a card holds, and only holds:

* the goal, in a line;
* what the executive saw itself: the project's files that changed on disk (scratch scripts
  the run wrote for itself left out) and the verifiers that passed;
* the worker's report, said to be one: what was wrong (the first exception a test run named,
  and the worker's own diagnosis in whole sentences, its filler stripped), the functions and
  classes its edits touched, and the project's own test command with its counts.

Dates, run and contract ids live in the memory's metadata, never in its text: they tell a
later worker nothing and pull a search toward every card that shares them.
"""

from __future__ import annotations

import re

from executive.hooks.context import PostRunContext
from executive.untrusted import clip, one_line
from executive.workers.record import Experience, command_core, listed

GOAL_CHARS = 110
DIAGNOSIS_CHARS = 220
SHOWN_FILES = 4
SHOWN_SYMBOLS = 4
COMMAND_CHARS = 70
SYMPTOM_CHARS = 120
SHOWN_TEST_SYMBOLS = 2
_MARKUP = re.compile(r"^\s*(?:(?:#{1,6}|[-*+]|\d+[.)])\s+)+|\*\*|`{3,}\w*|`")
_IN_TESTS = re.compile(r"(?:^|/)(?:tests?|testing)/|(?:^|/)test_[^/]*$|_test\.\w+$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(])")
_ENDS = (".", ":", "!", "?", ";")
# A sentence that says nothing about the code: praise, announcements, the worker's own news.
_FILLER = re.compile(
    r"^(?:perfect|great|excellent|good|done|now|okay|ok|awesome|all set|summary|the fix"
    r"|changes? made|the solution|solution|the problem|the issue|root cause|problem|issue"
    r"|bug analysis|verification|testing|tests?|summary of (?:the )?changes"
    r"|i(?:'ve| have)?(?: now)? (?:successfully )?(?:fixed|implemented|completed|resolved"
    r"|made|added|updated|verified|tested|created|written)"
    r"|let me|here(?:'s| is| are)|below is|i will|i'll|to summari[sz]e|in summary|everything"
    r"|all (?:the )?(?:existing )?tests|the tests? (?:now )?pass|this (?:fix|change) (?:is|ensures)"
    r"|the fix (?:is|has been)|the changes? (?:is|are|has|have been)|✅|✓)\b[^.]*[.:!]?$",
    re.IGNORECASE,
)
# "Modified django/db/models/query.py.": a list of what changed, which the card says itself.
_LISTING = re.compile(
    r"^(?:modified|added|updated|created|changed|edited|removed|wrote)\s+"
    r"(?:`?[\w-]+(?:[./][\w-]+)+`?(?:,\s*|\s+and\s+)?)+\.?$",
    re.IGNORECASE,
)
# "I've fixed the bug where": the news before what a sentence says.
_ANNOUNCED = re.compile(
    r"^(?:perfect|great|excellent)?[!.,]?\s*i(?:'ve| have)? (?:successfully )?(?:fixed|resolved"
    r"|addressed) (?:the |this )?(?:bug|issue|problem)(?: in [^,]+?)?(?: where| in which| that"
    r"| with| by which|:)\s+",
    re.IGNORECASE,
)
# A sentence that says why: the most useful one a worker's account has.
_CAUSE = re.compile(
    r"\b(?:because|caus|root cause|the (?:issue|problem|bug) (?:was|is)|missing|lack|did not"
    r"|didn't|does not|doesn't|instead of|incorrect|wrong|failed to|never|only (?:when|if)"
    r"|was not|wasn't|were not|when .* (?:is|was) (?:none|empty|null))",
    re.IGNORECASE,
)


def goal(ctx: PostRunContext) -> str:
    """The step's goal in a line: its own title, or the bundle's when it is the whole goal."""
    title = ctx.current_step.title.strip() or ctx.work_item.title
    return clip(one_line(title), GOAL_CHARS).rstrip(".") + "."


def sentences(text: str) -> list[str]:
    """Markdown as sentences: headings, bullets and marks gone, each line a sentence's end."""
    lines = [_MARKUP.sub("", line).strip() for line in text.splitlines()]
    flat = " ".join(x if x.endswith(_ENDS) else x + "." for x in lines if x)
    return [s.strip() for s in _SENTENCE.split(flat) if s.strip()]


def diagnosis(account: str, limit: int = DIAGNOSIS_CHARS) -> str:
    """The worker's own account of what was wrong, in whole sentences: those that say why
    first, filler never, within ``limit`` characters (one sentence cut if it is alone)."""
    said = [
        _unannounced(s) for s in sentences(account) if not (_FILLER.match(s) or _LISTING.match(s))
    ]
    said = [s for s in said if len(s) > 12]
    order = sorted(range(len(said)), key=lambda i: (not _CAUSE.search(said[i]), i))
    kept: list[int] = []
    for index in order:
        if sum(len(said[k]) + 1 for k in kept) + len(said[index]) > limit:
            break
        kept.append(index)
    if not kept and order:
        return clip(said[order[0]], limit)
    return " ".join(said[i] for i in sorted(kept))


def _unannounced(sentence: str) -> str:
    """``I've fixed the bug where X was Y.`` → ``X was Y.``"""
    found = _ANNOUNCED.match(sentence)
    if found is None:
        return sentence
    rest = sentence[found.end() :]
    return rest[:1].upper() + rest[1:]


def _seen(ctx: PostRunContext, experience: Experience | None) -> str:
    parts = []
    if experience is not None and experience.observed and experience.project_files:
        parts.append(f"changed {listed(experience.project_files, SHOWN_FILES)}")
    passed = [v.verifier for v in ctx.validation_report.verifiers if v.result == "PASS"]
    if passed:
        parts.append(f"verifiers passed ({', '.join(passed[:3])})")
    return f"Seen: {'; '.join(parts)}." if parts else ""


def _report(experience: Experience) -> str:
    parts = []
    if experience.symptom:
        parts.append(f"Failed with “{clip(experience.symptom, SYMPTOM_CHARS)}”.")
    why = diagnosis(experience.summary)
    if why:
        parts.append(why)
    if not experience.observed and experience.project_files:
        parts.append(f"Changed {listed(experience.project_files, SHOWN_FILES)}.")
    names = symbol_names(experience)
    if names:
        parts.append(f"Edited {listed(names, SHOWN_SYMBOLS)}.")
    test = next((t for t in reversed(experience.tests) if t.passed and t.own), None)
    if test is not None:
        counts = f" ({test.counts})" if test.counts else ""
        parts.append(f"Tests: `{clip(command_core(test.command), COMMAND_CHARS)}`{counts}.")
    return f"The worker's report: {' '.join(parts)}" if parts else ""


def symbol_names(experience: Experience) -> list[str]:
    """The functions and classes its edits touched in the code; only when it touched none
    there, the first few of its tests' (a test's models and helpers say little)."""
    code = [s.name for s in experience.symbols if not _IN_TESTS.search(s.path)]
    tests = [s.name for s in experience.symbols if _IN_TESTS.search(s.path)]
    return list(dict.fromkeys(code or tests[:SHOWN_TEST_SYMBOLS]))


def card(ctx: PostRunContext) -> str:
    """The card of a passed run: goal, what the executive saw, what the worker reported.
    A command worker's output is no report (it may echo anything, a pack included)."""
    experience = ctx.experience
    lines = [goal(ctx), _seen(ctx, experience)]
    if experience is not None and experience.source != "command":
        lines.append(_report(experience))
    return "\n".join(line for line in lines if line)

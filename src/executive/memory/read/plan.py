"""The reader's first questions, by angle, for each kind of consumer.

Each question is a full sentence with the literal identifiers in it (slug, vendor, error
text): whole questions carry intent that a keyword bag loses. The reader refines from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from executive.memory.read import about
from executive.memory.read.pack import entry_tokens
from executive.memory.read.reading import ReadRequest, Scope
from executive.memory.store.base import MemoryRecord
from executive.memory.taxonomy import EXECUTIVE_APP, GLOBAL_APP
from executive.untrusted import clip

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# How much of a goal's prose the step's question carries: all of it, as plain search asks
# (a work item's description is at most this long). Measured on SWE-ContextBench's
# development split with experience cards: 300 characters, recall 0.698; the whole goal,
# 0.754 (bench/experience.py; docs/benchmarks.md).
GIST_CHARS = 2000


def _gist(description: str, limit: int = GIST_CHARS) -> str:
    """The goal's opening, in whole sentences up to ``limit`` characters (cut if the first
    sentence alone is longer)."""
    sentences = _SENTENCE.split(" ".join(description.split()))
    gist = sentences[0]
    for sentence in sentences[1:]:
        if len(gist) + 1 + len(sentence) > limit:
            break
        gist += " " + sentence
    return clip(gist, limit)


def _error_line(error: str, limit: int = 160) -> str:
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    # The last line of an error usually names it (tracebacks end with the exception).
    line = lines[-1] if lines else ""
    return clip(line, limit)


def project_scopes(app_id: str) -> tuple[Scope, ...]:
    return (Scope(f"project {app_id}", app_ids=(app_id,)), Scope("global", app_ids=(GLOBAL_APP,)))


def for_step(
    *,
    title: str,
    slug: str,
    app_id: str,
    step_number: int,
    step_title: str,
    vendor: str,
    description: str = "",
    retry_attempt: int = 1,
    last_error: str = "",
) -> ReadRequest:
    """Hook B: what would change how this step goes?

    The step in its own words comes first (a wrapper sentence around it pulls the search
    toward every memory that shares the wrapper), then the last error when retrying; the
    reader then refines from what came back (multi-hop) until its top ten stop changing, at
    most eight questions. The rules that apply are asked last, of the global scope only:
    every pack gets its principles, and no project search is diluted by that question.
    Measured on LoCoMo (``bench/retrieval.py``, row ``pack``).
    """
    gist = _gist(description)
    context = "" if step_title.strip() == title.strip() else f" (step {step_number} of “{title}”)"
    questions = [f"{step_title}{context}. {gist}".strip() if gist else f"{step_title}{context}"]
    if retry_attempt > 1 and last_error:
        questions.append(
            f"Attempt {retry_attempt - 1} of bundle {slug} failed with “{_error_line(last_error)}”: "
            "what caused that before, and what fixed it?"
        )
    text = f"{title}\n{step_title}\n{description}"
    paths = about.paths_in(text)
    if paths:
        questions.append(about.files_question(paths))
    scopes = project_scopes(app_id)
    return ReadRequest(
        topic=f"step {step_number} ({step_title}) of bundle {slug}",
        questions=tuple(questions),
        scopes=scopes,
        # A pack has room for ten: stop on a stable top ten, not at three corroborated.
        enough=None,
        paths=paths,
        named=paths + about.modules_in(text),
        closing=(
            (
                f"Which rules and principles apply to a worker doing “{title}”, for example "
                "about committing or pushing?",
                (scopes[1].name,),
            ),
        ),
    )


def for_failure(
    *,
    title: str,
    slug: str,
    app_id: str,
    step_title: str,
    vendor: str,
    attempts: int,
    last_error: str,
    signal: str,
) -> ReadRequest:
    """Hook D: the failure history of this bundle and the global reflective pool."""
    error = _error_line(last_error) or signal
    questions = (
        f"Bundle {slug} failed {attempts} times at “{step_title}” with “{error}”: what do we know about this failure?",
        f"What failure patterns have been recorded for bundle {slug}, and which run ids showed them?",
        f"Which other bundles failed with an error like “{signal}”, and what resolved it?",
        f"What do we know about {vendor} workers failing on work like “{title}”?",
    )
    scopes = (
        Scope(f"project {app_id}", app_ids=(app_id,)),
        Scope(
            "global reflective pool",
            app_ids=(GLOBAL_APP, EXECUTIVE_APP),
            types=("reflective", "semantic"),
        ),
    )
    return ReadRequest(
        topic=f"the failures of bundle {slug}",
        questions=questions,
        scopes=scopes,
    )


def for_bundle(*, title: str, slug: str, app_id: str, description: str = "") -> ReadRequest:
    """Hook A, per queued bundle: what does memory say about taking it on now?"""
    questions = (
        f"What happened in earlier runs of bundle {slug} ({title})? {_gist(description, 160)}".strip(),
        f"Has bundle {slug} or work like “{title}” failed repeatedly, and why?",
        f"Which principles or lessons should shape whether to start “{title}” now?",
    )
    return ReadRequest(
        topic=f"bundle {slug}",
        questions=questions,
        scopes=project_scopes(app_id),
    )


def for_question(
    question: str,
    *,
    app_id: str,
    fill_tokens: int | None = None,
    entry_cost: Callable[[MemoryRecord], int] = entry_tokens,
) -> ReadRequest:
    """A plain question about one scope (``executive mem`` users, benchmarks).

    With ``fill_tokens`` the reader keeps asking until corroborated memories would fill
    that budget (each costing ``entry_cost``: by default what it costs in a pack), instead
    of stopping at three.
    """
    return ReadRequest(
        topic=question[:80],
        questions=(question,),
        scopes=(Scope(f"project {app_id}", app_ids=(app_id,)),),
        enough=None if fill_tokens else 3,
        fill_tokens=fill_tokens,
        entry_cost=entry_cost,
    )

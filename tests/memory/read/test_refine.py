from __future__ import annotations

from executive.memory.read.refine import lendable
from executive.memory.store.base import MemoryRecord


def record(text: str, **meta) -> MemoryRecord:
    return MemoryRecord(id="m", text=text, app_id="a", metadata={"type": "episodic", **meta})


def test_a_memory_about_code_lends_what_it_is_about():
    card = record(
        "Add get_response_async. Seen: changed django/contrib/staticfiles/handlers.py.",
        files=["django/contrib/staticfiles/handlers.py"],
        symbols=["StaticFilesHandlerMixin.get_response_async"],
    )
    assert lendable(card) == [
        (
            "StaticFilesHandlerMixin.get_response_async",
            "staticfileshandlermixin.get_response_async",
        ),
        ("django/contrib/staticfiles/handlers.py", "handlers.py"),
    ]


def test_labels_are_never_lent():
    # A run id, a date, a version or a hex id finds the memory it came from again, nothing else.
    said = record(
        "Run 2026-11-02-demo-x1 (contract-1796 02288eb6) v1.2.3 failed on mirror-eu, 3128."
    )
    lent = [surface for surface, _ in lendable(said)]
    assert "mirror-eu" in lent and "failed" in lent
    for label in ("2026-11-02-demo-x1", "02288eb6", "1.2.3", "3128", "contract-1796"):
        assert label not in lent

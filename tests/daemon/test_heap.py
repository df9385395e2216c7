"""The daemon's heap after start-up: frozen, and young collections spaced out."""

from __future__ import annotations

import gc

import pytest

from executive.daemon import heap


@pytest.fixture
def restored():
    """settle() changes the whole process: this test process gets its collector back."""
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_settle_freezes_what_exists_and_spaces_young_collections(restored):
    made_at_start_up = [[n] for n in range(1000)]  # containers: tracked by the collector
    frozen = heap.settle()
    assert frozen == gc.get_freeze_count() >= len(made_at_start_up)
    assert gc.get_threshold()[0] == heap.YOUNG
    # Cycles made afterwards are still collected.
    cycle: list[object] = []
    cycle.append(cycle)
    del cycle
    assert gc.collect() >= 1

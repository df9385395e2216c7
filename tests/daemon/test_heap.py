"""The daemon's heap after start-up: frozen, and young collections spaced out."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

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


def test_trim_gives_freed_heap_pages_back_to_the_system():
    def resident_kb() -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
        raise AssertionError("no RssAnon in /proc/self/status")

    # Small blocks interleaved with ones that stay: freed, they sit below live objects,
    # where glibc's own trimming of the heap's top does not reach them.
    blocks = [bytearray(512) for _ in range(100_000)]
    kept = blocks[::50]
    del blocks
    before = resident_kb()
    assert heap.trim()
    assert resident_kb() < before
    assert kept  # the live blocks are untouched


def mapped_after_a_large_free(configure: bool) -> int:
    """In a child (mallopt is process-wide): free a 4 MiB block, then count the mappings
    a 256 KiB block adds."""
    script = (
        "from executive.daemon import heap\n"
        f"assert heap.configure() if {configure} else True\n"
        "maps = lambda: open('/proc/self/maps').read().count('\\n')\n"
        "big = bytearray(4 << 20)\n"
        "del big\n"
        "before = maps()\n"
        "block = bytearray(256 << 10)\n"
        "print(maps() - before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def test_the_allocator_keeps_mapping_large_blocks_of_their_own_once_configured():
    # By default glibc raises its bar to the size of a freed block, so the next large
    # block comes from the heap and stays there when freed; configured, it is mapped
    # alone (and unmapped when freed).
    assert mapped_after_a_large_free(configure=False) == 0
    assert mapped_after_a_large_free(configure=True) == 1


@pytest.mark.anyio
async def test_the_daemon_gives_its_freed_heap_back_after_every_iteration(tmp_path):
    from executive.daemon import assembly
    from executive.settings import Settings
    from executive.workspace.scaffold import scaffold

    scaffold(tmp_path / "home")
    supervisor = assembly.build(Settings.load(tmp_path / "home"))
    assert heap.after_iteration in supervisor._after_iteration
    assert await heap.after_iteration()

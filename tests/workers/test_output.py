"""A worker's output streamed through a real pipe: redacted as it passes, capped, never held."""

from __future__ import annotations

import os
import subprocess

import anyio
import pytest

from executive.redact import REDACTED
from executive.workers.output import MARKER, LogFile, Pump, Tail

pytestmark = pytest.mark.anyio
TOKEN = "ghp_" + "Q7w" * 12


async def _through_pipe(sink, script: str) -> Pump:
    """``sh -c script`` writing into a pipe that a pump drains into ``sink``, to its end."""
    read_end, write_end = os.pipe()
    pump = Pump(read_end, sink)
    process = subprocess.Popen(["sh", "-c", script], stdout=write_end, stderr=write_end)
    os.close(write_end)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(pump.run)
        await anyio.to_thread.run_sync(process.wait)
    await pump.finish()
    await anyio.to_thread.run_sync(sink.close)
    assert process.returncode == 0  # it was never left blocked on a full pipe
    return pump


async def test_past_the_cap_one_marker_line_and_the_rest_is_read_and_dropped(tmp_path):
    log = tmp_path / "run.log"
    cap = 100_000
    printed = 5_000_000
    pump = await _through_pipe(
        LogFile(log, cap), f"echo 'first {TOKEN}'; yes 'a line' | head -c {printed}"
    )
    data = log.read_bytes()
    marker = MARKER.format(limit=cap).encode()
    assert data.startswith(f"first {REDACTED}\n".encode()) and data.endswith(marker)
    assert data.count(marker) == 1 and len(data) == cap + len(marker)
    assert pump.total == len(f"first {TOKEN}\n") + printed


async def test_below_the_cap_everything_is_kept_redacted_and_utf8_survives_the_chunks(tmp_path):
    log = tmp_path / "run.log"
    # 70,000 two-byte characters: a chunk boundary falls inside one of them.
    await _through_pipe(
        LogFile(log, None), f"printf 'é%.0s' $(seq 70000); echo; echo 'key {TOKEN} end'"
    )
    text = log.read_text()
    assert text == "é" * 70000 + f"\nkey {REDACTED} end\n"


async def test_a_tail_keeps_only_the_end():
    tail = Tail(1000, None)
    await _through_pipe(tail, f"seq 1 100000; echo 'last {TOKEN}'")
    text = tail.text()
    assert len(text) <= 1000 and text.endswith(f"100000\nlast {REDACTED}\n")


async def test_a_chunk_read_as_the_run_is_being_ended_is_still_written(tmp_path):
    # The pump read the worker's last line just as the run's end cancelled it: the thread
    # hop checks for cancellation first, and the line was lost (the error tail with it).
    log = tmp_path / "run.log"
    read_end, write_end = os.pipe()
    sink = LogFile(log, None)
    pump = Pump(read_end, sink)
    os.write(write_end, b"the last line\n")
    os.close(write_end)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await pump.run()
    await pump.finish()
    sink.close()
    assert log.read_text() == "the last line\n"

"""A worker's output as it comes: the run log (redacted, capped, one marker) and a tail."""

from __future__ import annotations

import random

import anyio
import pytest

from executive.redact import REDACTED
from executive.workers.output import MARKER, LogOutput, RunLog, Tail, cut_at_cap
from tests.security.hostile import token_shapes


def _chunks(data: bytes, seed: int) -> list[bytes]:
    """``data`` in pieces of random sizes (1 byte to 64 KB), as a pipe hands them over."""
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(data):
        size = rng.choice([1, 7, 512, 4096, 65536, rng.randrange(1, 65536)])
        out.append(data[at : at + size])
        at += size
    return out


def test_the_run_log_is_redacted_across_pieces_and_cut_at_its_cap_with_one_marker(tmp_path):
    shapes = token_shapes()
    line = "progress: ünïcode ok\n"
    text = "".join(f"{line * 500}{token}\n" for token in shapes.values()) * 40
    data = text.encode()
    cap = len(data) // 3
    log = RunLog(tmp_path / "run.log", cap)
    for chunk in _chunks(data, seed=30):
        log.write(chunk)
    log.close()
    written = (tmp_path / "run.log").read_bytes()
    body, marker = written.rstrip(b"\n").rsplit(b"\n", 1)
    assert marker.decode() == MARKER.format(cap=cap)
    assert len(body) <= cap and len(written) <= cap + len(marker) + 2
    assert body.decode().count(REDACTED) > 10  # whole, valid UTF-8, and redacted
    assert not [k for k, v in shapes.items() if v.splitlines()[-1].encode() in written]
    assert cut_at_cap(tmp_path / "run.log")


def test_a_run_log_under_its_cap_is_the_whole_output_redacted(tmp_path):
    token = token_shapes()["ghp"]
    log = RunLog(tmp_path / "run.log", 1 << 20)
    for chunk in _chunks(f"before {token} after\n".encode() * 3, seed=1):
        log.write(chunk)
    log.close()
    assert (tmp_path / "run.log").read_text() == f"before {REDACTED} after\n" * 3
    assert not cut_at_cap(tmp_path / "run.log")


@pytest.mark.anyio
async def test_past_the_cap_pieces_are_dropped_without_a_thread(tmp_path, monkeypatch):
    out = LogOutput(tmp_path / "run.log", 4096)
    await out.write(b"x" * 40_000)  # past the cap and the redactor's window
    handed = []
    monkeypatch.setattr(anyio.to_thread, "run_sync", lambda *a: handed.append(a))
    await out.write(b"Z" * 5000)
    assert handed == []
    monkeypatch.undo()
    await out.aclose()
    assert b"Z" not in (tmp_path / "run.log").read_bytes()


@pytest.mark.anyio
async def test_a_tail_holds_only_the_last_bytes():
    tail = Tail(10)
    for piece in (b"0123456789", b"abc", b"defghijklmnop"):
        await tail.write(piece)
    assert tail.text() == "ghijklmnop"

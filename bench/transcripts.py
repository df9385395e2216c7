"""The ``transcripts`` row of ``bench/experience.py``: what a user who indexes raw transcripts gets.

Each past session's transcript, as the run-log reader sees it (``workers.record.runlog``: the task,
then every assistant text, tool call and tool result in order, one ``user:`` /
``assistant:`` / ``tool call NAME:`` / ``tool result:`` line each), is cut into chunks of
``CHUNK_TOKENS`` tokens as the pack counts them (200: about 190 MiniLM word pieces, so the
embedder, which reads 256, sees the whole chunk; measured on three sessions, 1.5 % of chunks
are longer). A chunk is a record of its session (its run id), so it is scored like a memory
and costs what it would cost as a pack entry. The chunks of a project are indexed twice, on
the project's first question (not timed): BM25 (the store's own ``LexicalIndex`` over
``executive.memory.read.words``, k1 1.2, b 0.75) and MiniLM vectors (the project's embedder,
``executive.memory.store.embedder``; exact cosine in numpy). A question ranks its project's
chunks both ways, the first ``POOL`` of each, and the two rankings are fused by reciprocal
rank (k = 60, equal weights; ties by chunk id).

Embedding the chunks is most of the row's cost (about 44,000 chunks in all, 25-30 ms each on
one thread): ``cache`` keeps each project's vectors in a ``.npz`` keyed on the model file's
digest and each chunk's text, so a second run (the held-out split, another strategy) embeds
only what it has not seen. A text's vector depends on nothing but the model and the text
(``embedder.py``), so a cached vector is the one a fresh embed gives.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from executive.memory.read.lexical import LexicalIndex
from executive.memory.read.pack import cut_text
from executive.memory.read.scope_index import ScopedIndex
from executive.memory.read.words import terms
from executive.memory.store.base import MemoryRecord
from executive.memory.store.embedder import OnnxEncoder
from executive.workers.record import runlog
from swecb import Session

CHUNK_TOKENS = 200
POOL = 100  # chunks from each ranking; ~10 fill the budget
RRF_K = 60  # Cormack et al.'s constant: what a fusion library does by default
_WINDOW = CHUNK_TOKENS * 8  # characters looked at per chunk: a token is at most 6 letters
_BLOCK = 1000  # chunks embedded between progress lines


def session_text(reading: runlog.Reading) -> str:
    parts = [f"user: {reading.task}"]
    for event in reading.events:
        if isinstance(event, runlog.Said):
            parts.append(f"assistant: {event.text}")
        elif isinstance(event, runlog.ToolCall):
            parts.append(f"tool call {event.name}: {json.dumps(event.input, ensure_ascii=False)}")
        else:
            parts.append(f"tool result: {event.text}")
    return "\n".join(parts)


def chunks(text: str) -> list[str]:
    """``text`` in consecutive pieces of at most ``CHUNK_TOKENS`` tokens, cut as the pack cuts
    a long memory (``pack.cut_text``: on a blank when one falls in the piece's second half)."""
    out, at = [], 0
    while at < len(text):
        piece = cut_text(text[at : at + _WINDOW], CHUNK_TOKENS)
        if piece.strip():
            out.append(piece.strip())
        at += max(len(piece), 1)
    return out


def records(session: Session) -> list[MemoryRecord]:
    return [
        MemoryRecord(
            id=f"{session.id}#{n}",
            text=piece,
            app_id=session.app,
            run_id=session.run_id,
            metadata={"source": f"transcript {session.id[:8]}"},
            created_at=f"{session.day}T12:00:00+00:00",
        )
        for n, piece in enumerate(chunks(session_text(session.reading)))
    ]


@dataclass
class Project:
    records: list[MemoryRecord]
    words: ScopedIndex
    vectors: np.ndarray


class Transcripts:
    """Every session's chunks, indexed project by project on first use."""

    def __init__(
        self, sessions: list[Session], encoder: OnnxEncoder, model: Path, cache: Path | None
    ) -> None:
        self._sessions = sessions
        self._encoder = encoder
        self._model = model
        self._cache = cache
        self._projects: dict[str, Project] = {}
        self.chunks: dict[str, int] = {}  # per project indexed: for the report

    def project(self, app: str) -> Project:
        found = self._projects.get(app)
        if found is None:
            kept = [r for s in self._sessions if s.app == app for r in records(s)]
            words = ScopedIndex([(LexicalIndex(kept), None)])
            found = Project(kept, words, self._vectors(app, [r.text for r in kept]))
            self._projects[app] = found
            self.chunks[app] = len(kept)
        return found

    def search(self, project: Project, query: str) -> list[MemoryRecord]:
        """Both rankings of the project's chunks, fused; best first."""
        by_id = {r.id: r for r in project.records}
        lexical = project.words.search(terms(query), POOL)
        if project.records:
            cosine = project.vectors @ self._encoder.encode([query])[0]
            best = np.argsort(-cosine, kind="stable")[:POOL]
            dense = [project.records[int(i)].id for i in best]
        else:
            dense = []
        fused: dict[str, float] = {}
        for ranking in (lexical, dense):
            for rank, chunk_id in enumerate(ranking):
                fused[chunk_id] = fused.get(chunk_id, 0.0) + 1 / (RRF_K + rank + 1)
        return [by_id[i] for i in sorted(fused, key=lambda i: (-fused[i], i))]

    def _vectors(self, app: str, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        where = self._cache_file(app)
        known: dict[str, np.ndarray] = {}
        if where is not None and where.is_file():
            with np.load(where) as saved:
                known = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))
        missing = [(k, t) for k, t in zip(keys, texts, strict=True) if k not in known]
        print(
            f"{app}: {len(texts)} chunks, {len(texts) - len(missing)} from the cache",
            file=sys.stderr,
            flush=True,
        )
        for start in range(0, len(missing), _BLOCK):
            block = missing[start : start + _BLOCK]
            known.update(
                zip([k for k, _ in block], self._encoder.encode([t for _, t in block]), strict=True)
            )
            print(
                f"{app}: embedded {start + len(block)}/{len(missing)}", file=sys.stderr, flush=True
            )
        vectors = np.stack([known[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)
        if where is not None and missing:
            partial = where.with_suffix(".partial.npz")
            np.savez(partial, keys=np.array(keys), vectors=vectors)
            partial.replace(where)
        return vectors

    def _cache_file(self, app: str) -> Path | None:
        if self._cache is None:
            return None
        self._cache.mkdir(parents=True, exist_ok=True)
        return self._cache / f"{app}-{CHUNK_TOKENS}-{self._model_digest}.npz"

    @cached_property
    def _model_digest(self) -> str:
        return hashlib.sha256(self._model.read_bytes()).hexdigest()[:16]

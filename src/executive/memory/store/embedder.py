"""The embedder: all-MiniLM-L6-v2 on ONNX Runtime, with its tokenizer, and no torch.

The model is exported to ONNX once, at set-up (``python -m executive.setup.models``,
which ``make setup`` runs): torch is a set-up tool only. At run time this module imports numpy,
onnxruntime and tokenizers, so a process starts in well under a second and stays small.

Two traps (``light-engine.md``): the packaged ``tokenizer.json`` truncates at 128 tokens and
pads every input to 128, while sentence-transformers truncates at 256; we truncate at 256 and
never pad, so the fp32 vectors equal the torch path's. The int8 models quantize their
activations dynamically, with one range per tensor: in a batch that range is the whole batch's
(padding included), so a text's vector would depend on its neighbours (cosine 0.9991 alone
against in a batch). Each text is therefore run on its own: a text has one vector, whatever
batch it came in. (A store holds vectors of one embedder only: ``mem0_memory.py``.)
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
_SEARCH_CACHE = 1024
# One thread: the daemon shares the host with its workers. Two nearly doubled batch throughput
# on an idle host while texts ran in batches; one text a call, a second thread gained nothing
# on this 2-core host with other work running (load 1.3-3.3). A lone embed after a pause gains
# nothing (the pool thread must wake) and on a busy host takes 1.6x as long. The vectors are
# bit-identical for any count (the GEMMs split rows, never sums): a speed setting only.
DEFAULT_THREADS = 1
_threads = DEFAULT_THREADS


@dataclass(frozen=True)
class EmbedderSpec:
    key: str  # what EXECUTIVE_EMBEDDER names
    name: str  # what a store records: a different name means different vectors
    file: str
    folder: str = "all-MiniLM-L6-v2"  # under the models directory: one model, three exports
    dims: int = 384


EMBEDDERS: dict[str, EmbedderSpec] = {
    spec.key: spec
    for spec in (
        # int8 after SmoothQuant-style smoothing, 7-bit weights (executive.setup.smoothing): as fast
        # as minilm-int8, half its distance to fp32. The name records the recipe: change the
        # recipe (alpha, calibration, quantizer options) and the name must change too.
        EmbedderSpec(
            "minilm-int8-smooth",
            "all-MiniLM-L6-v2/onnx-int8-pc-rr-smooth0.8",
            "model_int8_smooth.onnx",
        ),
        EmbedderSpec("minilm-int8", "all-MiniLM-L6-v2/onnx-int8-pc", "model_int8.onnx"),
        EmbedderSpec("minilm-fp32", "all-MiniLM-L6-v2/onnx-fp32", "model.onnx"),
    )
}
DEFAULT_EMBEDDER = "minilm-int8-smooth"
# Stores built before embedders were recorded used torch's MiniLM: the same vectors as fp32.
LEGACY_NAME = EMBEDDERS["minilm-fp32"].name


def default_models_dir() -> Path:
    """Where set-up puts the models: ``EXECUTIVE_MODELS_DIR``, else inside the venv.

    The daemon passes its settings' ``models_dir`` explicitly; reading the variable here too
    lets set-up, the benchmarks and the tests use a folder of experimental exports.
    """
    configured = os.environ.get("EXECUTIVE_MODELS_DIR")
    return Path(configured) if configured else Path(sys.prefix) / "share" / "executive" / "models"


class ModelMissing(RuntimeError):
    pass


def model_file(spec: EmbedderSpec, models_dir: Path | None = None) -> Path:
    return (models_dir or default_models_dir()) / spec.folder / spec.file


class OnnxEncoder:
    """Token ids in, mean-pooled L2-normalised vectors out (sentence-transformers' recipe)."""

    def __init__(self, path: Path, threads: int | None = None) -> None:
        from tokenizers import Tokenizer

        from executive.memory.store.ortenv import onnxruntime

        ort = onnxruntime()

        if not path.is_file():
            raise ModelMissing(
                f"the embedding model {path} is missing: run `make setup` or "
                "`python -m executive.setup.models` once"
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = min(threads or _threads, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        # A spinning pool thread burns a core the workers need between embeds.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # The arena keeps the largest batch's buffers for the life of the process: one batch
        # of 250 texts left 200 MB resident. Without it, embeds take the same time and give
        # the same vectors to the bit (measured on this model, one question and batches of 4).
        options.enable_cpu_mem_arena = False
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(path.parent / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()  # one text a call: nothing to pad to
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One vector a text, each from an ONNX call of its own (batch invariance, above):
        ``encode([t])[0]`` is ``encode([..., t, ...])[i]`` to the bit."""
        if not texts:
            return np.zeros((0, 0), np.float32)
        return np.stack([self._run(text) for text in texts])

    def _run(self, text: str) -> np.ndarray:
        ids = np.array([self._tokenizer.encode(text).ids], np.int64)
        with self._lock:
            hidden = self._session.run(
                None,
                {
                    "input_ids": ids,
                    "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.zeros_like(ids),
                },
            )[0]
        pooled = hidden[0].mean(0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


_ENCODERS: dict[Path, OnnxEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


def use_threads(count: int) -> None:
    """The process's intra-op thread count (``EXECUTIVE_EMBED_THREADS``), set before the first
    encoder loads: a session keeps the count it was made with."""
    global _threads
    if count < 1:
        raise ValueError(f"embed threads must be at least 1, not {count}")
    _threads = count


def encoder(path: Path) -> OnnxEncoder:
    """One session per model file per process: every store shares it."""
    with _ENCODERS_LOCK:
        if path not in _ENCODERS:
            _ENCODERS[path] = OnnxEncoder(path)
        return _ENCODERS[path]


class Embedder:
    """What mem0 calls (``embed``, ``embed_batch``), plus a question cache and a batch primer.

    The reader asks several questions and searches several scopes with each: a question is
    embedded once (an LRU keyed on the exact text), and the planned questions in one batch
    (``prime``). Only "search" embeddings are cached; writes embed afresh.
    """

    def __init__(self, spec: EmbedderSpec, models_dir: Path | None = None) -> None:
        self._path = model_file(spec, models_dir)
        self._cache: OrderedDict[str, list[float]] = OrderedDict()

    @cached_property
    def _encoder(self) -> Any:
        """The session, loaded on the first embed: a listing needs none."""
        return encoder(self._path)

    def embed(self, text: str, memory_action: Any = None) -> list[float]:
        if memory_action != "search":
            return self._encoder.encode([text])[0].tolist()
        found = self._cache.get(text)
        if found is None:
            found = self._keep(text, self._encoder.encode([text])[0].tolist())
        self._cache.move_to_end(text)
        return list(found)

    def embed_batch(self, texts: Sequence[str], memory_action: Any = "add") -> list[list[float]]:
        vectors = self._encoder.encode(list(texts)).tolist()
        if memory_action == "search":
            for text, vector in zip(texts, vectors, strict=True):
                self._keep(text, vector)
        return vectors

    def prime(self, texts: Sequence[str]) -> None:
        fresh = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if fresh:
            self.embed_batch(fresh, "search")

    def _keep(self, text: str, vector: list[float]) -> list[float]:
        self._cache[text] = vector
        self._cache.move_to_end(text)
        while len(self._cache) > _SEARCH_CACHE:
            self._cache.popitem(last=False)
        return vector

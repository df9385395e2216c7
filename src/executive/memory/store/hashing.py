"""A deterministic embedder for tests and trials: words hashed into a fixed-size vector.

No model, no runtime, no start-up cost: the same text always gives the same vector on any
machine. It matches on shared words (and word pairs), not on meaning, so recall is far
below MiniLM's; what it is for is fast tests of everything that is not the store.
"""

from __future__ import annotations

import hashlib
import itertools
import re

import numpy as np

NAME = "hashing-384/v1"
DIMS = 384
_WORD = re.compile(r"[a-z0-9]+")


def _slot(feature: str) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    # The sign bit spreads collisions around zero instead of piling them up.
    return number % DIMS, (1.0 if number >> 63 else -1.0)


def embed(text: str) -> np.ndarray:
    """A unit vector (or zeros for a text with no words)."""
    words = _WORD.findall(text.lower())
    vector = np.zeros(DIMS, dtype=np.float32)
    for feature in [*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))]:
        index, sign = _slot(feature)
        vector[index] += sign
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector

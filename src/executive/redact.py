"""One redactor for every edge: known secret values and the shapes of credentials.

Text from a worker or a verifier is untrusted and may carry a secret it read somewhere (a
``cat .env.executive`` in a mode that lets it, a token in its own environment, a key in a
file it was given). Everything the daemon records passes :func:`scrub` first: the log, the
work ledger, ``STEPS.json``, ``PROGRESS_LOG.md``, ``needs-you.md``, the next attempt's
prompt and ``CLAUDE.md``, hook contexts and so memory. Known values come from the process
environment and the ``.env.executive`` of this home and of every peer home (by variable
name); shapes catch the rest.
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
# Shapes of credentials that may arrive without having been in our environment, each with
# the words one of which its every match holds (lower case: looked for in the lowered text),
# so a text without them is not searched (a scan per shape cost ~0.2 s per 1 MB). Order
# matters where one shape is a prefix of another (sk-ant- before sk-).
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
    (
        ("uthor",),  # (?i) folds a dotless i into i: its word holds no i, s or k
        re.compile(r"(?i)(?<=authorization: )(token|bearer|basic) [^\s\"',]+"),
    ),
    (
        ("uthor",),  # (?i) folds a dotless i into i: its word holds no i, s or k
        re.compile(r"(?i)(?<=['\"]authorization['\"]: ['\"])(token|bearer|basic) [^\"']+"),
    ),
)
# Short values would redact ordinary words; real keys are long.
MIN_SECRET_LEN = 6
# Streaming (:class:`Stream`): how much is held back, at least and at most, and how much of
# what was let go stays as context. A JWT's first two parts, a key's BEGIN line and more
# fit in the window; a 4096-bit key block is about 3.3 KB.
WINDOW = 16 * 1024
MAX_HELD = 256 * 1024
CONTEXT = 64


def _shapes_in(text: str) -> list[re.Pattern[str]]:
    """The shapes ``text`` may hold: those one of whose words it contains."""
    lowered = text.lower()
    return [shape for words, shape in SHAPES if any(w in lowered for w in words)]


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

    def scrub(self, text: str) -> str:
        for secret in self._ordered:
            if secret in text:
                text = text.replace(secret, REDACTED)
        for shape in _shapes_in(text):
            text = shape.sub(REDACTED, text)
        return text

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where :meth:`scrub` would replace something in ``text``: sorted, overlaps joined."""
        found = []
        for secret in self._ordered:
            at = text.find(secret)
            while at != -1:
                found.append((at, at + len(secret)))
                at = text.find(secret, at + len(secret))
        for shape in _shapes_in(text):
            found += [m.span() for m in shape.finditer(text) if m.end() > m.start()]
        joined: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if joined and start <= joined[-1][1]:
                joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
            else:
                joined.append((start, end))
        return joined

    @property
    def longest(self) -> int:
        return len(self._ordered[0]) if self._ordered else 0

    def value(self, value: Any) -> Any:
        """``value`` with every string in it scrubbed (dicts, lists and tuples walked)."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, Mapping):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple | set):
            return [self.value(v) for v in value]
        return value


class Stream:
    """Redaction of text that arrives in pieces (a worker's output, read as it comes).

    What :meth:`feed` returns never ends inside something the redactor replaces: it holds
    back the last :data:`WINDOW` characters (a secret, or a bounded shape, may still be
    arriving; longer when a known secret is longer) and every match that reaches the end of
    what it has (an unbounded shape, a key block before its END line, may go on). What it
    holds is bounded by :data:`MAX_HELD`: past that it lets go of what it has, redacted as far
    as it is seen (a credential-shaped run longer than that is redacted in pieces, and its
    continuation, no longer starting like a credential, is not). The last :data:`CONTEXT`
    characters let go stay as context for shapes that look behind (``Authorization: ``) or
    need a word boundary.
    """

    def __init__(self, redactor: Redactor | None = None) -> None:
        self._redactor = redactor or _redactor
        self._text = ""  # context (already let go) + held
        self._start = 0  # where the held part begins

    def feed(self, text: str) -> str:
        self._text += text
        window = max(WINDOW, self._redactor.longest)
        held = len(self._text) - self._start
        if held <= window:
            return ""
        spans = self._redactor.spans(self._text)
        cut = len(self._text) - window
        for start, end in spans:
            # A match across the cut is kept whole for later; one that may go on (it reaches
            # the end) only while what is held stays within bounds.
            still_open = end == len(self._text)
            if start < cut < end and (not still_open or held <= MAX_HELD):
                cut = max(start, self._start)
                break
        return self._let_go(cut, spans)

    def close(self) -> str:
        """Everything still held, redacted: the text is complete."""
        return self._let_go(len(self._text), self._redactor.spans(self._text))

    def _let_go(self, cut: int, spans: list[tuple[int, int]]) -> str:
        out, at = [], self._start
        for start, end in spans:
            start, end = max(start, at), min(end, cut)
            if start < end:
                out += [self._text[at:start], REDACTED]
                at = end
        out.append(self._text[at:cut])
        keep = max(0, cut - CONTEXT)
        self._text, self._start = self._text[keep:], cut - keep
        return "".join(out)


def secrets_from_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [value for name, value in env.items() if SECRET_NAME.search(name) and value]


def secrets_from_env_file(path: Path) -> list[str]:
    """Secret-named values of a ``KEY=value`` file (``.env.executive``); none if unreadable."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        values[name.strip()] = value.strip().strip("'\"")
    return secrets_from_environment(values)


_redactor = Redactor()


def use(shared: Redactor) -> None:
    """Make ``shared`` the process-wide redactor (the log's processor), keeping what was known."""
    global _redactor
    shared.add(_redactor._secrets)
    _redactor = shared


def redactor() -> Redactor:
    """The process-wide redactor: the log and every recording edge share it."""
    return _redactor


def scrub(text: str) -> str:
    return _redactor.scrub(text)


def learn(*, homes: Iterable[Path] = (), secrets: Iterable[str] = ()) -> None:
    """Teach the process-wide redactor the environment's, the homes' and given secrets.

    ``homes`` are this home and its peers: a worker that finds a peer's token somewhere
    must not get it recorded here either.
    """
    _redactor.add(secrets_from_environment())
    for home in homes:
        _redactor.add(secrets_from_env_file(home / ".env.executive"))
    _redactor.add(secrets)

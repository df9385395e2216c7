"""A worker's request to its egress proxy: one HTTP/1.x head, read strictly.

The head comes from the sandbox, so it is read as a front end behind the proxy might read
it, and refused where two readers could disagree: a folded line, a bare CR or LF inside a
line, a header name that is not a token, two ``Host`` or ``Content-Length`` headers, a
``Transfer-Encoding``. A host must be an ASCII name or an IP address (an IDN goes as
``xn--…``); anything else gets a 400 and never reaches a resolver.

A plain ``http://`` request names its host twice, in its URL and in its ``Host`` header; a
shared front end routes by the header, so the header must name the host the proxy checks
(port included, 80 when left out), or the request gets a 403. Exactly one request is carried
per connection: its head, with ``Connection: close``, and the ``Content-Length`` bytes of its
body; what the worker sends after that goes nowhere (see :mod:`executive.workers.egress.proxy`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from executive import hosts

# RFC 9110's token: the only bytes a method or a header name may hold.
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TARGET = re.compile(rb"[\x21-\x7e\x80-\xff]+")  # no space, no control character
_LENGTH = re.compile(rb"[0-9]{1,18}")
_HOP_BY_HOP = {
    b"proxy-connection",
    b"proxy-authorization",
    b"connection",
    b"keep-alive",
    b"te",
    b"trailer",
    b"upgrade",
}


class Refused(Exception):
    """A request the proxy will not carry; ``status`` and the reason go back to the worker."""

    def __init__(self, status: int, reason: str, where: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.where = where  # host:port when the request got that far


@dataclass(frozen=True)
class Target:
    host: str
    port: int
    head: bytes | None = None  # plain HTTP: the request head to send on; CONNECT: None
    body: int = 0  # plain HTTP: the bytes of body after the head (its Content-Length)


def shown(text: str, limit: int = 100) -> str:
    """Worker-chosen text as a 403 or a log line may quote it: ASCII, quoted, bounded."""
    return ascii(text[:limit])


def authority(host: str, port: int | None) -> str:
    """``host:port`` as a URL writes it (an IPv6 address in brackets)."""
    shown_host = f"[{host}]" if ":" in host else host
    return shown_host if port is None else f"{shown_host}:{port}"


def host_of(text: str) -> str:
    """``text`` as a host the proxy may look up: an ASCII name or an address; else 400."""
    name = hosts.normal(text)
    if not name or not (hosts.is_ip(name) or hosts.valid_name(name)):
        raise Refused(400, f"{shown(text)} is not a host name or IP address (IDNs go as xn--)")
    return name


def parse_head(head: bytes) -> Target:
    """The destination of one request head (without its blank line); Refused(400) if none."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if (
        len(parts) != 3
        or not parts[2].startswith(b"HTTP/1.")
        or not _TOKEN.fullmatch(parts[0])
        or not _TARGET.fullmatch(parts[1])
    ):
        raise Refused(400, "not an HTTP/1.x request line")
    method, target, version = (p.decode("latin-1") for p in parts)
    if method == "CONNECT":
        try:
            host, port = hosts.split_port(target)
        except ValueError:
            port = None
        if port is None or not host:
            raise Refused(400, f"CONNECT needs host:port, not {shown(target)}")
        return Target(host_of(host), port)
    if not target.lower().startswith("http://"):
        raise Refused(400, "only CONNECT (for https) and absolute http:// URLs are carried")
    return _plain(method, target, version, lines[1:])


def _plain(method: str, target: str, version: str, lines: list[bytes]) -> Target:
    try:
        url = urlsplit(target)
        port = 80 if url.port is None else url.port
    except ValueError:
        raise Refused(400, f"not a URL: {shown(target)}") from None
    if not url.hostname or not port:
        raise Refused(400, f"no host or port in {shown(target)}")
    host = host_of(url.hostname)
    fields = [_field(line) for line in lines]
    kept = [line for line, (name, _) in zip(lines, fields, strict=True) if name not in _HOP_BY_HOP]
    named = [value for name, value in fields if name == b"host"]
    if len(named) > 1:
        raise Refused(400, "more than one Host header")
    if named:
        _check_host(named[0].decode("latin-1"), host, port)
    else:
        kept.insert(0, b"Host: " + authority(host, None if port == 80 else port).encode())
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    start = f"{method} {path} {version}"
    head = b"\r\n".join([start.encode("latin-1"), *kept, b"Connection: close", b"", b""])
    return Target(host, port, head, _length(fields))


def _field(line: bytes) -> tuple[bytes, bytes]:
    """One header line as (lower-case name, value); Refused(400) when it could be misread."""
    if line[:1] in (b" ", b"\t"):
        raise Refused(400, "a folded header line (obsolete line folding is not carried)")
    if any(c in line for c in (b"\r", b"\n", b"\x00")):
        raise Refused(400, "a bare CR, LF or NUL inside a header line")
    name, colon, value = line.partition(b":")
    if not colon or not _TOKEN.fullmatch(name):
        raise Refused(400, f"not a header line: {shown(line.decode('latin-1'), 40)}")
    return name.lower(), value.strip(b" \t")


def _check_host(value: str, host: str, port: int) -> None:
    """The ``Host`` header names the checked host and port (80 when it names none)."""
    try:
        named, named_port = hosts.split_port(value)
    except ValueError:
        raise Refused(400, f"the Host header {shown(value)} has no valid port") from None
    if (host_of(named), named_port or 80) != (host, port):
        raise Refused(403, f"the Host header names {shown(value)}, not {authority(host, port)}")


def _length(fields: list[tuple[bytes, bytes]]) -> int:
    """The body's length: its one Content-Length, 0 without one; 411 for a chunked body."""
    if any(name == b"transfer-encoding" for name, _ in fields):
        raise Refused(411, "a plain http:// body needs a Content-Length (or use https)")
    lengths = {value for name, value in fields if name == b"content-length"}
    if not lengths:
        return 0
    if len(lengths) > 1 or not _LENGTH.fullmatch(next(iter(lengths))):
        raise Refused(400, "the Content-Length is not one number")
    return int(next(iter(lengths)))

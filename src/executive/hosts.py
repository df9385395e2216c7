"""The hosts a sandboxed worker may reach: the operator's allow-list, parsed and matched.

An entry is a host name (``api.anthropic.com``), a name under a domain (``*.pythonhosted.org``,
any depth below it, not the domain itself) or an IP address, with an optional port
(``pypi.org:443``, ``[::1]:8080``). Without a port an entry allows the web's two, 443 and 80.
Names are compared case-insensitively, a trailing dot ignored, an address in its canonical
spelling. The egress proxy asks here; the settings check each entry once, when they load, so
a typo stops start-up with its name. A name leads only to public addresses; an address entry
is the operator's choice of that address, whatever it is (:func:`named`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

WEB_PORTS = (443, 80)
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


@dataclass(frozen=True)
class Entry:
    host: str  # lower case; for a wildcard, the domain below which names match
    port: int | None = None  # None: 443 and 80
    wildcard: bool = False

    def allows(self, host: str, port: int) -> bool:
        if port not in ((self.port,) if self.port is not None else WEB_PORTS):
            return False
        name = normal(host)
        return name.endswith("." + self.host) if self.wildcard else name == self.host

    def __str__(self) -> str:
        host = f"*.{self.host}" if self.wildcard else self.host
        host = f"[{host}]" if ":" in host else host
        return host if self.port is None else f"{host}:{self.port}"


def normal(host: str) -> str:
    """``host`` as entries hold it: lower case, no brackets, no trailing dot; an address in
    its one canonical spelling (``0:0::1`` is ``::1``)."""
    name = host.strip().removeprefix("[").removesuffix("]").rstrip(".").lower()
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(normal(host))
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    """A literal loopback address, or ``localhost`` (which every resolver keeps local)."""
    name = normal(host)
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def valid_name(name: str) -> bool:
    labels = name.split(".")
    # A top-level domain is never all digits: "10.0.0.1" is an address, not a name.
    named = not labels[-1].isdigit()
    return len(name) <= 253 and named and all(_LABEL.match(label) for label in labels)


def split_port(text: str) -> tuple[str, int | None]:
    """``host``, ``host:port`` or ``[v6]:port`` into its parts; ValueError when malformed."""
    text = text.strip()
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(text)
        port_text = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    else:
        host, port_text = text, None  # a bare IPv6 address has several colons and no port
    if port_text is None:
        return host, None
    # ASCII digits only: str.isdigit() also takes "²" and "١٢٣", and int() reads the latter.
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) <= 65535:
        raise ValueError(text)
    return host, int(port_text)


def entry(text: str) -> Entry:
    """One allow-list entry; ValueError naming it when it is not one."""
    not_host = f"{text!r} is not a host name, *.domain or IP address (no scheme, no path)"
    if "/" in text:
        raise ValueError(not_host)
    try:
        host, port = split_port(text)
    except ValueError:
        raise ValueError(f"{text!r} has no valid port (1-65535)") from None
    name = normal(host)
    wildcard = name.startswith("*.")
    name = name.removeprefix("*.")
    if not name or not (valid_name(name) or (is_ip(name) and not wildcard)):
        raise ValueError(not_host)
    return Entry(name, port, wildcard)


def parse(value: str) -> list[Entry]:
    """Every entry of a comma-separated list; one ValueError naming each bad one."""
    entries, bad = [], []
    for item in filter(None, (part.strip() for part in value.split(","))):
        try:
            entries.append(entry(item))
        except ValueError as exc:
            bad.append(str(exc))
    if bad:
        raise ValueError("; ".join(bad))
    return entries


def allowed(entries: Iterable[Entry], host: str, port: int) -> bool:
    return any(e.allows(host, port) for e in entries)


def named(entries: Iterable[Entry], address: str, port: int) -> bool:
    """Whether an entry is ``address`` itself: the operator's own choice of that address,
    which a name leading there does not make (see :mod:`executive.workers.egress.addresses`)."""
    return any(is_ip(e.host) and e.allows(address, port) for e in entries)

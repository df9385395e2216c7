"""Where a worker's request may land: public addresses only, never this machine's own.

The egress proxy resolves an allowed name once (:data:`Resolve`, a seam the tests fill with
a table: no DNS runs here) and connects to exactly the addresses it checked, so a name that
answers differently a second time (DNS rebinding) gains nothing. Each address is checked by
:func:`refusal`: an address of any interface of this machine (:func:`own`, a public one
included), loopback, private, shared (CGNAT, where cloud metadata services live),
link-local, unique local, multicast, documentation, benchmarking or reserved is refused,
with its reason; so is an IPv6 address that carries one of those IPv4 addresses inside it
(IPv4-mapped, NAT64, 6to4). The table is the IANA special-purpose registries', written out
here rather than taken from :mod:`ipaddress`, whose ``is_global`` differs between Python
versions and calls ``64:ff9b::7f00:1`` (loopback, through NAT64) global; ``is_global`` is
still asked last, as a net.
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
import socket
import struct
from collections.abc import Awaitable, Callable, Collection

import anyio

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolve = Callable[[str, int], Awaitable[list[str]]]
OWN = "an address of this machine"

_V4 = [
    ("0.0.0.0/8", "an unspecified address"),
    ("10.0.0.0/8", "a private address"),
    ("100.64.0.0/10", "a shared (CGNAT) address"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local address"),
    ("172.16.0.0/12", "a private address"),
    ("192.0.0.0/24", "a reserved address"),
    ("192.0.2.0/24", "a documentation address"),
    ("192.88.99.0/24", "a reserved address"),
    ("192.168.0.0/16", "a private address"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("224.0.0.0/4", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"),
]
_V6 = [
    ("::/128", "an unspecified address"),
    ("::1/128", "a loopback address"),
    ("64:ff9b:1::/48", "a private address"),
    ("100::/64", "a reserved address"),
    ("2001::/23", "a reserved address"),
    ("2001:db8::/32", "a documentation address"),
    ("3fff::/20", "a documentation address"),
    ("5f00::/16", "a reserved address"),
    ("fc00::/7", "a unique local (ULA) address"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("ff00::/8", "a multicast address"),
]
SPECIAL = [(ipaddress.ip_network(net), reason) for net, reason in _V4 + _V6]
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def parse(address: str) -> IPAddress:
    """An address as a resolver gives it, without an IPv6 zone (``fe80::1%eth0``)."""
    return ipaddress.ip_address(address.split("%", 1)[0])


def embedded(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 one leads to, and how, when it carries one."""
    if ip in _MAPPED:
        return ipaddress.IPv4Address(ip.packed[-4:]), "IPv4-mapped"
    if ip in _NAT64:
        return ipaddress.IPv4Address(ip.packed[-4:]), "NAT64"
    if ip.sixtofour is not None:
        return ip.sixtofour, "6to4"
    return None


def refusal(address: str, own: Collection[IPAddress]) -> str | None:
    """Why ``address`` is not reached through a name, or None when it is public."""
    ip = parse(address)
    inner = embedded(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    if ip in own:
        return OWN
    if inner is not None:
        why = refusal(str(inner[0]), own)
        return None if why is None else f"{why} ({inner[1]})"
    for network, reason in SPECIAL:
        if ip.version == network.version and ip in network:
            return reason
    if isinstance(ip, ipaddress.IPv6Address) and ip not in _GLOBAL_UNICAST:
        return "a reserved address"
    return None if ip.is_global else "not a globally routable address"


class _IfAddrs(ctypes.Structure):
    pass


_IfAddrs._fields_ = [
    ("next", ctypes.POINTER(_IfAddrs)),
    ("name", ctypes.c_char_p),
    ("flags", ctypes.c_uint),
    ("addr", ctypes.c_void_p),
    ("netmask", ctypes.c_void_p),
    ("ifu", ctypes.c_void_p),
    ("data", ctypes.c_void_p),
]


def own() -> frozenset[IPAddress]:
    """Every address bound to an interface of this machine now (Linux ``getifaddrs``).

    Read at each request, not once: an interface that comes up later (a VPN, DHCP) counts.
    OSError when the C library will not say: the caller refuses rather than guesses.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.getifaddrs.argtypes = [ctypes.POINTER(ctypes.POINTER(_IfAddrs))]
    libc.freeifaddrs.argtypes = [ctypes.POINTER(_IfAddrs)]
    head = ctypes.POINTER(_IfAddrs)()
    if libc.getifaddrs(ctypes.byref(head)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"getifaddrs: {os.strerror(errno)}")
    found = set()
    try:
        node = head
        while node:
            if node.contents.addr:
                ip = _sockaddr(node.contents.addr)
                if ip is not None:
                    found.add(ip)
            node = node.contents.next
    finally:
        libc.freeifaddrs(head)
    return frozenset(found)


def _sockaddr(pointer: int) -> IPAddress | None:
    """The address in a ``struct sockaddr`` (Linux layout: the family in its first two bytes)."""
    (family,) = struct.unpack("=H", ctypes.string_at(pointer, 2))
    if family == socket.AF_INET:
        return ipaddress.IPv4Address(ctypes.string_at(pointer, 8)[4:8])
    if family == socket.AF_INET6:
        return ipaddress.IPv6Address(ctypes.string_at(pointer, 24)[8:24])
    return None  # a link-layer address (AF_PACKET)


async def system_resolve(host: str, port: int) -> list[str]:
    """What this host's resolver answers for ``host``, each address once; OSError if none."""
    found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))

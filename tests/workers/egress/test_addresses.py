"""Which addresses a name may lead a worker to: public ones, never this machine's."""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executive.workers.egress import addresses
from executive.workers.egress.addresses import OWN, SPECIAL, refusal

NOWHERE: frozenset = frozenset()


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.255.0.9", "a loopback address"),
        ("::1", "a loopback address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("10.1.2.3", "a private address"),
        ("172.31.255.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("100.100.100.200", "a shared (CGNAT) address"),  # a cloud's metadata service
        ("100.64.0.1", "a shared (CGNAT) address"),
        ("169.254.169.254", "a link-local address"),  # another cloud's
        ("fe80::1%eth0", "a link-local address"),
        ("fd00:ec2::254", "a unique local (ULA) address"),  # and another's, over IPv6
        ("fc00::1", "a unique local (ULA) address"),
        ("fec0::1", "a site-local address"),
        ("224.0.0.251", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("192.0.2.7", "a documentation address"),
        ("2001:db8::1", "a documentation address"),
        ("198.18.0.1", "a benchmarking address"),
        ("240.0.0.1", "a reserved address"),
        ("255.255.255.255", "a reserved address"),
        ("2001::1", "a reserved address"),  # Teredo
        ("::1.2.3.4", "a reserved address"),  # IPv4-compatible, long deprecated
        ("4000::1", "a reserved address"),  # outside global unicast
        ("::ffff:127.0.0.1", "a loopback address (IPv4-mapped)"),
        ("::ffff:10.0.0.1", "a private address (IPv4-mapped)"),
        ("64:ff9b::a9fe:a9fe", "a link-local address (NAT64)"),  # 169.254.169.254
        ("64:ff9b::7f00:1", "a loopback address (NAT64)"),  # Python calls it global
        ("64:ff9b:1::a00:1", "a private address"),
        ("2002:a00:1::1", "a private address (6to4)"),  # 10.0.0.1; Python calls it global
    ],
)
def test_an_address_that_is_not_public_is_refused_with_its_reason(address, reason):
    assert refusal(address, NOWHERE) == reason


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "1.1.1.1", "160.79.104.10", "2606:4700::1111", "2a00:1450:4001::200e",
     "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "100.128.0.1", "172.32.0.1"],
)  # fmt: skip
def test_a_public_address_is_reached(address):
    assert refusal(address, NOWHERE) is None


def test_this_machines_own_address_is_refused_even_when_public():
    own = frozenset({ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address("2606:4700::1111")})
    assert refusal("8.8.8.8", own) == OWN
    assert refusal("2606:4700::1111", own) == OWN
    assert refusal("::ffff:8.8.8.8", own) == f"{OWN} (IPv4-mapped)"
    assert refusal("8.8.4.4", own) is None


_V4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
_V6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address)
# Most of the IPv6 space is not global unicast: draw from 2000::/3 (where 6to4 lies) too.
_V6_UNICAST = st.integers(2**125, 2**126 - 1).map(ipaddress.IPv6Address)


@st.composite
def _special_v4(draw: st.DrawFn) -> ipaddress.IPv4Address:
    network = draw(st.sampled_from([n for n, _ in SPECIAL if n.version == 4]))
    offset = draw(st.integers(0, network.num_addresses - 1))
    return network.network_address + offset


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_special_v4())
def test_a_special_ipv4_address_is_refused_in_every_ipv6_coat(ip):
    assert refusal(str(ip), NOWHERE) is not None
    coats = {
        "IPv4-mapped": ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + ip.packed),
        "NAT64": ipaddress.IPv6Address(b"\0\x64\xff\x9b" + b"\0" * 8 + ip.packed),
        "6to4": ipaddress.IPv6Address(b"\x20\x02" + ip.packed + b"\0" * 10),
    }
    for coat, wrapped in coats.items():
        assert refusal(str(wrapped), NOWHERE) == f"{refusal(str(ip), NOWHERE)} ({coat})"


@settings(max_examples=500, deadline=None, derandomize=True)
@given(_V4 | _V6 | _V6_UNICAST)
def test_what_is_reached_is_global_and_in_no_special_block(ip):
    if refusal(str(ip), NOWHERE) is not None:
        return
    assert ip.is_global
    inner = addresses.embedded(ip) if ip.version == 6 else None
    checked = ip if inner is None else inner[0]
    assert not any(checked.version == n.version and checked in n for n, _ in SPECIAL)
    if checked.version == 6:
        assert checked in ipaddress.ip_network("2000::/3")


@pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2's ip is not installed")
def test_this_machines_addresses_are_every_interfaces():
    # iproute2 reads them over netlink; our getifaddrs must find the same set.
    shown = json.loads(subprocess.run(["ip", "-j", "addr"], capture_output=True).stdout)
    expected = {
        ipaddress.ip_address(a["local"]) for link in shown for a in link.get("addr_info", [])
    }
    found = addresses.own()
    assert found == expected
    assert ipaddress.ip_address("127.0.0.1") in found


def test_the_system_resolver_answers_each_address_once_or_raises():
    found = anyio.run(addresses.system_resolve, "localhost", 80)
    assert "127.0.0.1" in found and len(found) == len(set(found))
    with pytest.raises(OSError):
        anyio.run(addresses.system_resolve, "nothing.invalid", 80)  # RFC 6761: never resolves

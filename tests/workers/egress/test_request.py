"""A worker's request head, read strictly: where it goes, what goes on, and what is refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executive.workers.egress.request import Refused, Target, parse_head


def test_connect_names_its_target():
    target = parse_head(b"CONNECT Api.Anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443")
    assert (target.host, target.port, target.head) == ("api.anthropic.com", 443, None)
    assert parse_head(b"CONNECT [::1]:8443 HTTP/1.1").host == "::1"
    assert parse_head(b"CONNECT [0:0::1]:8443 HTTP/1.1").host == "::1"  # one spelling
    # The Host header of a CONNECT is not the target: the tunnel goes where the line says.
    assert parse_head(b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: other.example").host == "pypi.org"


def test_a_plain_request_goes_on_in_origin_form_without_proxy_headers():
    head = (
        b"POST http://pypi.org:8080/simple/x?y=1 HTTP/1.1\r\nHost: pypi.org:8080\r\n"
        b"Proxy-Authorization: Basic abc\r\nProxy-Connection: keep-alive\r\n"
        b"Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\nTE: trailers\r\n"
        b"Content-Length: 3"
    )
    target = parse_head(head)
    assert (target.host, target.port, target.body) == ("pypi.org", 8080, 3)
    assert target.head == (
        b"POST /simple/x?y=1 HTTP/1.1\r\nHost: pypi.org:8080\r\nContent-Length: 3\r\n"
        b"Connection: close\r\n\r\n"
    )
    # No Host header: the checked host becomes one (user information left out).
    target = parse_head(b"GET http://user:pw@example.com HTTP/1.0")
    assert target.head == b"GET / HTTP/1.0\r\nHost: example.com\r\nConnection: close\r\n\r\n"
    target = parse_head(b"GET http://[::1]:8080/ HTTP/1.1")
    assert target.head == b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n"
    assert target.body == 0


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://pypi.org/", "pypi.org"),
        ("http://pypi.org/", "PyPI.org."),
        ("http://pypi.org/", "pypi.org:80"),
        ("http://pypi.org:80/", "pypi.org"),
        ("http://pypi.org:8080/", "pypi.org:8080"),
        ("http://[::1]:8080/", "[::1]:8080"),
        ("http://[::1]:8080/", "[0::1]:8080"),
    ],
)
def test_a_host_header_that_names_the_checked_host_goes_on_as_sent(url, host):
    target = parse_head(f"GET {url} HTTP/1.1\r\nHost: {host}".encode())
    assert target.head is not None and f"\r\nHost: {host}\r\n".encode() in target.head


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://pypi.org/", "evil.example"),  # a shared front end would route by this
        ("http://pypi.org/", "pypi.org.evil.example"),
        ("http://pypi.org:8080/", "pypi.org"),  # port 80, not 8080
        ("http://pypi.org/", "pypi.org:8080"),
        ("http://127.0.0.1:9/", "localhost:9"),
    ],
)
def test_a_host_header_that_names_another_host_is_refused(url, host):
    with pytest.raises(Refused, match=r"^the Host header names") as caught:
        parse_head(f"GET {url} HTTP/1.1\r\nHost: {host}".encode())
    assert caught.value.status == 403
    assert repr(host) in caught.value.reason


def _pattern(text: str) -> str:
    return "".join("\\" + c if c in r"()[]\.*+?^$|{}" else c for c in text)


@pytest.mark.parametrize(
    ("head", "status", "reason"),
    [
        (b"GET https://pypi.org/ HTTP/1.1", 400, "only CONNECT (for https) and absolute http://"),
        (b"GET /relative HTTP/1.1", 400, "only CONNECT"),
        (b"CONNECT pypi.org HTTP/1.1", 400, "CONNECT needs host:port"),
        (b"CONNECT pypi.org:99999 HTTP/1.1", 400, "CONNECT needs host:port"),
        ("CONNECT pypi.org:٤٤٣ HTTP/1.1".encode(), 400, "CONNECT needs host:port"),
        (b"GET http://pypi.org:x/ HTTP/1.1", 400, "not a URL"),
        (b"GET http://pypi.org:0/ HTTP/1.1", 400, "no host or port"),
        (b"\x16\x03\x01\x02\x00", 400, "not an HTTP/1.x request line"),
        (b"GET http://pypi.org/ SPDY/3", 400, "not an HTTP/1.x request line"),
        (b"G(T http://pypi.org/ HTTP/1.1", 400, "not an HTTP/1.x request line"),
        (b"GET http://pypi.org/\x00 HTTP/1.1", 400, "not an HTTP/1.x request line"),
        ("CONNECT bücher.example:443 HTTP/1.1".encode(), 400, "is not a host name or IP"),
        ("GET http://bücher.example/ HTTP/1.1".encode(), 400, "is not a host name or IP"),
        (b"CONNECT a_b.example:443 HTTP/1.1", 400, "'a_b.example' is not a host name"),
        (b"CONNECT 127.1:443 HTTP/1.1", 400, "'127.1' is not a host name"),
        (b"CONNECT [::1:443 HTTP/1.1", 400, "CONNECT needs host:port"),
        (b"GET http://p.org/ HTTP/1.1\r\nHost: a\r\nHost: p.org", 400, "more than one Host"),
        (b"GET http://p.org/ HTTP/1.1\r\nHost: p.org:x", 400, "has no valid port"),
        (b"GET http://p.org/ HTTP/1.1\r\nHost: ", 400, "'' is not a host name"),
        (b"GET http://p.org/ HTTP/1.1\r\nX: a\r\n Host: e.org", 400, "a folded header line"),
        (b"GET http://p.org/ HTTP/1.1\r\nX: a\nHost: e.org", 400, "a bare CR, LF or NUL"),
        (b"GET http://p.org/ HTTP/1.1\r\nX: a\rHost: e.org", 400, "a bare CR, LF or NUL"),
        (b"GET http://p.org/ HTTP/1.1\r\nHost : e.org", 400, "not a header line: 'Host : e.org'"),
        (b"GET http://p.org/ HTTP/1.1\r\nno colon", 400, "not a header line"),
        (b"GET http://p.org/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2", 400, "one num"),
        (b"GET http://p.org/ HTTP/1.1\r\nContent-Length: -1", 400, "not one number"),
        (b"GET http://p.org/ HTTP/1.1\r\nContent-Length: 1, 1", 400, "not one number"),
        (b"GET http://p.org/ HTTP/1.1\r\nTransfer-Encoding: chunked", 411, "needs a Content-L"),
    ],
)
def test_what_could_be_misread_is_refused_and_says_why(head, status, reason):
    with pytest.raises(Refused, match=_pattern(reason)) as caught:
        parse_head(head)
    assert caught.value.status == status
    assert caught.value.reason.isascii()  # a worker's bytes are quoted, never passed on raw


def test_one_content_length_said_twice_is_one():
    head = b"PUT http://p.org/ HTTP/1.1\r\nContent-Length: 7\r\nContent-Length: 7"
    assert parse_head(head).body == 7


# A head of what a worker might send: request lines and header lines made of pieces that
# matter (hosts in every script, CR, LF, NUL, spaces, colons) and of anything at all.
_piece = st.sampled_from(
    ["GET", "CONNECT", " ", "http://", "pypi.org", "bücher", "\x00", "\r", "\n", ":", "443",
     "[::1]", "Host", "Content-Length", "HTTP/1.1", "/", "@", "%", "\u0661", ".", "\t"]
)  # fmt: skip
_text = st.lists(_piece | st.text(max_size=8), max_size=12).map("".join)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(_text, min_size=1, max_size=5).map("\r\n".join) | st.binary(max_size=200))
def test_any_head_is_a_target_or_a_refusal_never_an_error(head):
    raw = head if isinstance(head, bytes) else head.encode("utf-8", "surrogatepass")
    try:
        target = parse_head(raw)
    except Refused as exc:
        assert exc.status in (400, 403, 411) and exc.reason.isascii()
        return
    assert isinstance(target, Target) and target.host.isascii() and 0 < target.port < 65536
    if target.head is not None:
        # What goes on is one head: it ends once, and names the checked host in one Host line.
        assert target.head.count(b"\r\n\r\n") == 1 and target.head.endswith(b"\r\n\r\n")
        lines = target.head.split(b"\r\n")
        assert sum(line.lower().startswith(b"host:") for line in lines) == 1

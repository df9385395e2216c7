"""The allow-list's entries: what parses, what it names when it does not, what matches."""

from __future__ import annotations

import pytest

from executive import hosts
from executive.settings import SettingsError, load_settings


def test_entries_parse_with_and_without_ports():
    entries = hosts.parse(
        " api.anthropic.com, *.PythonHosted.org ,pypi.org:443,[::1]:8080,10.0.0.5"
    )
    assert [str(e) for e in entries] == [
        "api.anthropic.com",
        "*.pythonhosted.org",
        "pypi.org:443",
        "[::1]:8080",
        "10.0.0.5",
    ]
    assert hosts.parse("") == []


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("https://pypi.org", "'https://pypi.org' is not a host name"),
        ("pypi.org/simple", "'pypi.org/simple' is not a host name"),
        ("pypi.org:0", "'pypi.org:0' has no valid port"),
        ("pypi.org:https", "'pypi.org:https' has no valid port"),
        ("exa mple.com", "'exa mple.com' is not a host name"),
        ("-bad.com", "'-bad.com' is not a host name"),
        ("*.10.0.0.1", "'*.10.0.0.1' is not a host name"),
        ("*", "'*' is not a host name"),
    ],
)
def test_a_bad_entry_is_named(value, named):
    with pytest.raises(ValueError, match="^" + named.replace("*", r"\*").replace(".", r"\.")):
        hosts.parse(f"ok.example.com,{value}")


def test_every_bad_entry_is_named_at_once_and_stops_the_settings(tmp_path):
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path, worker_allow_hosts="https://a.com,ok.com,b.com:99999")
    message = str(caught.value)
    assert "EXECUTIVE_WORKER_ALLOW_HOSTS" in message
    assert "'https://a.com' is not a host name" in message and "'b.com:99999'" in message
    assert load_settings(tmp_path).worker_allow_list == [hosts.Entry("api.anthropic.com")]


def test_matching_follows_names_ports_and_domains():
    allow = hosts.parse("api.anthropic.com,*.pythonhosted.org,pypi.org:8443,[::1]:9000")
    assert hosts.allowed(allow, "api.anthropic.com", 443)
    assert hosts.allowed(allow, "API.Anthropic.COM.", 80)  # case and the root's dot
    assert not hosts.allowed(allow, "api.anthropic.com", 22)  # without a port: 443 and 80
    assert not hosts.allowed(allow, "api.anthropic.com.evil.net", 443)
    assert not hosts.allowed(allow, "evilapi.anthropic.com", 443)
    assert hosts.allowed(allow, "files.pythonhosted.org", 443)
    assert hosts.allowed(allow, "a.b.pythonhosted.org", 443)
    assert not hosts.allowed(allow, "pythonhosted.org", 443)  # the domain itself is not below it
    assert not hosts.allowed(allow, "xpythonhosted.org", 443)
    assert hosts.allowed(allow, "pypi.org", 8443) and not hosts.allowed(allow, "pypi.org", 443)
    assert hosts.allowed(allow, "[::1]", 9000) and not hosts.allowed(allow, "::1", 9001)


def test_loopback_is_an_address_or_localhost():
    assert hosts.is_loopback("127.0.0.2") and hosts.is_loopback("[::1]")
    assert hosts.is_loopback("LOCALHOST") and hosts.is_loopback("api.localhost")
    assert not hosts.is_loopback("10.0.0.1") and not hosts.is_loopback("localhost.example.com")


def test_an_address_has_one_spelling_and_a_port_ascii_digits():
    assert hosts.normal("[0:0:0:0:0:0:0:1]") == hosts.normal("::1") == "::1"
    assert hosts.normal("::FFFF:7F00:1") == "::ffff:7f00:1"
    assert hosts.parse("[0::1]:9000") == [hosts.Entry("::1", 9000)]
    assert hosts.allowed(hosts.parse("[::1]:9000"), "0:0::1", 9000)
    for text in ("pypi.org:٤٤٣", "pypi.org:²"):  # digits to str.isdigit, and to int() too
        with pytest.raises(ValueError):
            hosts.split_port(text)


def test_an_address_is_named_only_by_an_entry_that_is_that_address():
    allow = hosts.parse("mirror.example.com:8443,10.0.0.5:8443,*.example.org")
    assert hosts.named(allow, "10.0.0.5", 8443)
    assert not hosts.named(allow, "10.0.0.5", 443)  # the entry's port only
    assert not hosts.named(allow, "10.0.0.6", 8443)
    assert not hosts.named(hosts.parse("mirror.example.com:8443"), "mirror.example.com", 8443)

"""The one redactor: known values by variable name, and the shapes of credentials."""

from __future__ import annotations

import json

from executive import redact
from executive.redact import (
    REDACTED,
    Redactor,
    Stream,
    secrets_from_env_file,
    secrets_from_environment,
)
from tests.security.hostile import token_shapes


def test_every_token_shape_is_redacted_in_text_and_in_json():
    shapes = token_shapes()
    redactor = Redactor()
    for name, token in shapes.items():
        text = f"before {token} after"
        assert redactor.scrub(text) == f"before {REDACTED} after", name
        encoded = json.dumps({"error": text, "other": "kept"})
        assert json.loads(redactor.scrub(encoded)) == {
            "error": f"before {REDACTED} after",
            "other": "kept",
        }, name


def test_a_cut_off_private_key_is_still_redacted_and_json_stays_json():
    head = token_shapes()["private_key"][:120]
    assert "PRIVATE KEY" not in Redactor().scrub(head)
    assert json.loads(Redactor().scrub(json.dumps([head, "next"]))) == [REDACTED, "next"]


def test_known_values_come_from_secret_names_in_the_environment_and_the_env_file(tmp_path):
    env_file = tmp_path / ".env.executive"
    env_file.write_text(
        "# comment\nGITHUB_TOKEN=plain-value-123\nexport DB_PASSWORD='pw-456789'\n"
        "V3_MEM0_USER_ID=alice-installation\nIDLE_SLEEP_SECONDS=30\n"
    )
    assert sorted(secrets_from_env_file(env_file)) == ["plain-value-123", "pw-456789"]
    assert secrets_from_environment({"SERVICE_API_KEY": "k-12345678", "HOME": "/root"}) == [
        "k-12345678"
    ]
    assert secrets_from_env_file(tmp_path / "missing") == []


def test_values_nested_in_structures_are_scrubbed_and_short_ones_ignored():
    redactor = Redactor(["plain-value-123", "abc"])
    assert redactor.value({"a": ["x plain-value-123", ("abc",)], "n": 3}) == {
        "a": [f"x {REDACTED}", ["abc"]],
        "n": 3,
    }


def test_the_redactor_learns_every_homes_secrets(tmp_path, monkeypatch):
    monkeypatch.setattr(redact, "_redactor", Redactor())
    own, peer = tmp_path / "own", tmp_path / "peer"
    for home, value in ((own, "own-token-123456"), (peer, "peer-token-654321")):
        home.mkdir()
        (home / ".env.executive").write_text(f"GITHUB_TOKEN={value}\n")
    redact.learn(homes=[own, peer, tmp_path / "gone"], secrets=["given-secret-42"])
    text = "own-token-123456 peer-token-654321 given-secret-42"
    assert redact.scrub(text) == " ".join([REDACTED] * 3)


def _streamed(redactor: Redactor, text: str, size: int) -> str:
    stream = Stream(redactor)
    out = [stream.feed(text[at : at + size]) for at in range(0, len(text), size)]
    return "".join(out) + stream.close()


def test_a_stream_redacts_what_a_whole_text_would_at_every_cut(monkeypatch):
    # A small window, so that every secret and shape here is cut at every place by one of
    # the chunk sizes (the real window is 16 KB).
    monkeypatch.setattr(redact, "WINDOW", 48)
    shapes = token_shapes()
    known = "plain" + "x7Q" * 30  # longer than the window: the window grows to hold it
    redactor = Redactor([known])
    filler = "ordinary words, a path /srv/app/main.py and numbers 12345\n"
    parts = [
        *shapes.values(),
        known,
        "Authorization: Bearer abc.def-123",
        "{'authorization': 'token zz9'}",
    ]
    text = filler + "".join(f"{p}\n{filler * (i % 3)}" for i, p in enumerate(parts)) + filler
    whole = redactor.scrub(text)
    needles = [*[v for k, v in shapes.items() if k != "private_key"], known, "abc.def-123", "zz9"]
    needles.append(shapes["private_key"].splitlines()[1])
    for size in (1, 2, 3, 7, 47, 48, 49, 100, 1000, len(text)):
        streamed = _streamed(redactor, text, size)
        assert streamed == whole, size
        assert not [n for n in needles if n in streamed], size


def test_a_key_block_still_open_is_held_until_its_end_arrives(monkeypatch):
    monkeypatch.setattr(redact, "WINDOW", 32)
    key = token_shapes()["private_key"]
    stream = Stream(Redactor())
    first = stream.feed("log line\n" * 10 + key[: len(key) // 2])
    assert "BEGIN" not in first and first.startswith("log line")
    rest = stream.feed(key[len(key) // 2 :] + "\nafter\n" + "tail " * 20) + stream.close()
    assert REDACTED in rest and "PRIVATE KEY" not in first + rest
    assert (first + rest).endswith("tail " * 20)


def test_what_a_stream_holds_is_bounded(monkeypatch):
    monkeypatch.setattr(redact, "WINDOW", 16)
    monkeypatch.setattr(redact, "MAX_HELD", 256)
    stream = Stream(Redactor())
    # A shape that never ends: held while it is short, let go (redacted) once over the bound.
    assert stream.feed("sk-" + "a" * 200) == ""
    released = stream.feed("a" * 200)
    assert released.startswith(REDACTED) and "sk-" not in released
    assert len(stream.close()) <= 16 + 64

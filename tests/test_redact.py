"""The one redactor: known values by variable name, and the shapes of credentials."""

from __future__ import annotations

import json

from executive.redact import (
    REDACTED,
    Redactor,
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
        # Read as the settings read it (python-dotenv): the comment is not part of the value.
        "SERVICE_SECRET=commented-value-789 # rotated in May\n"
    )
    assert sorted(secrets_from_env_file(env_file)) == [
        "commented-value-789",
        "plain-value-123",
        "pw-456789",
    ]
    assert secrets_from_environment({"SERVICE_API_KEY": "k-12345678", "HOME": "/root"}) == [
        "k-12345678"
    ]
    assert secrets_from_env_file(tmp_path / "missing") == []


def test_the_longest_secret_is_replaced_first():
    redactor = Redactor(["abcdef", "abcdefghijkl"])
    assert redactor.scrub("x abcdefghijkl y") == f"x {REDACTED} y"


def test_values_nested_in_structures_are_scrubbed_and_short_ones_ignored():
    redactor = Redactor(["plain-value-123", "abc"])
    assert redactor.value({"a": ["x plain-value-123", ("abc",)], "n": 3}) == {
        "a": [f"x {REDACTED}", ["abc"]],
        "n": 3,
    }


def test_the_redactor_learns_every_homes_secrets(tmp_path, monkeypatch):
    from executive import redact

    monkeypatch.setattr(redact, "_redactor", Redactor())
    own, peer = tmp_path / "own", tmp_path / "peer"
    for home, value in ((own, "own-token-123456"), (peer, "peer-token-654321")):
        home.mkdir()
        (home / ".env.executive").write_text(f"GITHUB_TOKEN={value}\n")
    redact.learn(homes=[own, peer, tmp_path / "gone"], secrets=["given-secret-42"])
    text = "own-token-123456 peer-token-654321 given-secret-42"
    assert redact.scrub(text) == " ".join([REDACTED] * 3)


def _streamed(redactor: Redactor, text: str, cuts: list[int]) -> str:
    stream, out, at = redactor.stream(), [], 0
    for cut in [*cuts, len(text)]:
        out.append(stream.feed(text[at:cut]))
        at = cut
    return "".join(out) + stream.flush()


def test_a_secret_split_at_any_point_between_pieces_is_still_redacted():
    shapes = token_shapes()
    known = "plain-known-value-4711"
    redactor = Redactor([known])
    for secret in [*shapes.values(), known, "Authorization: Bearer abc.def-123"]:
        text = f"before {secret} after\n"
        whole = redactor.scrub(text)
        assert REDACTED in whole
        for cut in range(1, len(text)):
            assert _streamed(redactor, text, [cut]) == whole, (secret[:12], cut)


def test_a_stream_in_random_pieces_gives_what_the_whole_text_gives():
    import random

    shapes = list(token_shapes().values())
    redactor = Redactor(["plain-known-value-4711"])
    lines = [
        f"line {i} {shapes[i % len(shapes)] if i % 5 == 0 else 'plain-known-value-4711'} "
        "Authorization: Bearer tok-abcdefgh\n"
        for i in range(400)
    ]
    text = "".join(lines)
    pick = random.Random(30)  # fixed: the same pieces on every run
    for _ in range(20):
        cuts = sorted(pick.sample(range(1, len(text)), 300))
        assert _streamed(redactor, text, cuts) == redactor.scrub(text)


def test_a_key_block_that_never_ends_is_dropped_and_memory_stays_bounded():
    import base64
    import os

    stream = Redactor().stream()
    out = [stream.feed("before\n-----BEGIN RSA PRIVATE KEY-----\n")]
    body = base64.b64encode(os.urandom(300_000)).decode()
    held = 0
    for at in range(0, len(body), 4096):
        out.append(stream.feed(body[at : at + 4096] + "\n"))
        held = max(held, len(stream._pending))
    out.append(stream.feed("-----END RSA PRIVATE KEY-----\n(done)\n") + stream.flush())
    text = "".join(out)
    assert text == f"before\n{REDACTED}(done)\n"
    assert held <= stream.MAX_HOLD + 4096 + stream.WINDOW


def test_a_long_jwt_cut_anywhere_in_its_first_parts_is_still_redacted():
    # An OAuth access token of ~1.4 KB: header and claims are long before the second '.'
    # makes it a JWT. With a 256-character window the part before the cut was let go as
    # plain text, and the rest never matched: the whole token reached the log.
    import base64
    import secrets

    def part(claims: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")

    claims = {"sub": secrets.token_hex(8), "scope": "read write " * 60, "iss": "https://a.b"}
    token = ".".join(
        [part({"alg": "RS256", "kid": "k1"}), part(claims), secrets.token_urlsafe(256)]
    )
    text = "log line\n" * 100 + f"token={token}\n" + "more\n" * 50
    whole = Redactor().scrub(text)
    assert token not in whole
    start = text.index(token)
    for cut in range(start + 1, start + len(token), 97):
        assert _streamed(Redactor(), text, [cut]) == whole, cut

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
    from executive import redact

    monkeypatch.setattr(redact, "_redactor", Redactor())
    own, peer = tmp_path / "own", tmp_path / "peer"
    for home, value in ((own, "own-token-123456"), (peer, "peer-token-654321")):
        home.mkdir()
        (home / ".env.executive").write_text(f"GITHUB_TOKEN={value}\n")
    redact.learn(homes=[own, peer, tmp_path / "gone"], secrets=["given-secret-42"])
    text = "own-token-123456 peer-token-654321 given-secret-42"
    assert redact.scrub(text) == " ".join([REDACTED] * 3)

"""The union of several homes' harvest ledgers: time order, and whose each key is."""

from __future__ import annotations

from executive.memory.durability.shared import Member, SharedLedgers, member
from executive.memory.write.ledger import HarvestLedger, KeyState


def _line(ledger: HarvestLedger, ts: str, attempt: str, key: str, status: str, **more) -> None:
    from executive.files import append_jsonl

    entry = {"ts": ts, "op": "add", "attempt": attempt, "key": key, "status": status, **more}
    append_jsonl(ledger.path_for(), entry)


def test_the_union_folds_every_home_in_time_order_and_names_each_keys_home(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    la, lb = (HarvestLedger(h / "ledgers" / "harvest-runs") for h in (a, b))
    payload = {"text": "t", "metadata": {}}
    _line(la, "2026-12-01T10:00:00+00:00", "a1", "k1", "PENDING", payload=payload)
    _line(la, "2026-12-01T10:00:01+00:00", "a1", "k1", "SUCCEEDED", memory_id="m1")
    _line(lb, "2026-12-01T10:00:00.5+00:00", "b1", "k2", "PENDING", payload=payload)
    _line(lb, "2026-12-01T10:00:02+00:00", "b1", "k2", "SUCCEEDED", memory_id="m2")
    # B skipped k1 as a duplicate of A's: a skip adds nothing of B's own.
    _line(lb, "2026-12-01T10:00:03+00:00", "b2", "k1", "DUPLICATE", memory_id="m1")
    # A deletes k2 (B's) later: the union says it is gone.
    _line(la, "2026-12-01T10:00:04+00:00", "a2", "k2", "SUCCEEDED", op="delete")
    union = SharedLedgers([Member(a, "exec-a"), Member(b, "exec-b")])
    state = union.state()
    assert sorted(state.live()) == ["k1"]
    assert state.keys["k1"].home == str(a) and state.keys["k1"].memory_id == "m1"
    assert state.keys["k2"].home == str(a)  # the delete was A's line
    assert len(union.files()) == 2
    assert union.owner(state.keys["k1"]) == str(a)
    assert union.owner(None, "exec-b") == str(b)
    assert union.owner(None, "exec-z") == "unknown (executive exec-z)"
    assert la.owner(KeyState("k1")) == str(a)


def test_a_peer_is_named_by_its_own_env_file(tmp_path, monkeypatch):
    monkeypatch.setenv("EXECUTIVE_NAME", "this-process")  # never the peer's name
    peer = tmp_path / "peer home!"
    peer.mkdir()
    assert member(peer).name == "peer-home"
    (peer / ".env.executive").write_text(
        "EXECUTIVE_NAME=builder-2\nEXECUTIVE_SPEC_FILES=docs/RULES.md, SPEC.md\n"
    )
    assert member(peer) == Member(peer, "builder-2", ("docs/RULES.md", "SPEC.md"))

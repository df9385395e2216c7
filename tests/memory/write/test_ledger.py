from __future__ import annotations

from executive.memory.write.ledger import HarvestLedger, fold


def add(key: str, attempt: str, status: str, text: str = "t", **extra) -> dict:
    return {
        "op": "add",
        "key": key,
        "attempt": attempt,
        "status": status,
        "payload": {"text": text},
        **extra,
    }


def test_fold_gives_the_live_keys_and_the_pending_ones():
    state = fold(
        iter(
            [
                add("k1", "a1", "PENDING"),
                add("k1", "a1", "SUCCEEDED", memory_id="m1"),
                add("k2", "a2", "PENDING"),
                add("k2", "a2", "TIMEOUT"),
                add("k3", "a3", "PENDING"),  # killed before the result line
                {"op": "delete", "key": "k1", "attempt": "a4", "status": "PENDING"},
                {"op": "delete", "key": "k1", "attempt": "a4", "status": "SUCCEEDED"},
            ]
        )
    )
    assert set(state.live()) == {"k2", "k3"}
    assert {s.key for s in state.pending()} == {"k2", "k3"}
    assert state.keys["k1"].exists is False and state.keys["k1"].confirmed


def test_a_later_confirmation_clears_pending_and_updates_apply():
    state = fold(
        iter(
            [
                add("k1", "a1", "ERROR"),
                add("k1", "a2", "SUCCEEDED", memory_id="m9"),
                {
                    "op": "update",
                    "key": "k1",
                    "attempt": "a3",
                    "status": "SUCCEEDED",
                    "changes": {"text": "new"},
                },
            ]
        )
    )
    assert state.pending() == []
    assert state.keys["k1"].payload["text"] == "new"
    assert state.keys["k1"].memory_id == "m9"


def test_rejected_lines_are_not_writes():
    state = fold(iter([{"op": "add", "status": "REJECTED", "rejections": []}]))
    assert state.keys == {}


def test_a_torn_last_line_is_tolerated(tmp_path):
    ledger = HarvestLedger(tmp_path)
    ledger.record(add("k1", "a1", "PENDING"))
    ledger.record(add("k1", "a1", "SUCCEEDED", memory_id="m1"))
    path = ledger.files()[0]
    with path.open("a") as handle:
        handle.write('{"op":"add","key":"k2","attempt":"a2","sta')  # killed mid-write
    assert set(ledger.state().live()) == {"k1"}
    ledger.record(add("k3", "a3", "SUCCEEDED"))  # the next append starts a fresh line
    assert set(ledger.state().live()) == {"k1", "k3"}

"""A record as a store builds it (``MemoryRecord.stored``) is the record pydantic builds."""

from __future__ import annotations

import copy
import pickle
import uuid

import pydantic
import pytest

from executive.memory.store.base import MemoryRecord
from executive.memory.store.records import record_from_payload

PAYLOAD = {
    "data": "Pin uv in CI.",
    "hash": "0" * 32,
    "user_id": "agent-test",
    "agent_id": "executive",
    "run_id": "2026-12-02-ci-abc",
    "app_id": "ci",
    "type": "procedural",
    "confidence": 0.9,
    "key": "a" * 32,
    "created_at": "2026-12-02T08:00:00+00:00",
    "updated_at": "2026-12-02T09:00:00+00:00",
    "role": "user",
}


def validated(point_id: object, score: float | None = None) -> MemoryRecord:
    meta = {k: PAYLOAD[k] for k in ("app_id", "type", "confidence", "key")}
    return MemoryRecord(
        id=str(point_id),
        text=PAYLOAD["data"],
        user_id="agent-test",
        agent_id="executive",
        app_id="ci",
        run_id="2026-12-02-ci-abc",
        metadata=meta,
        created_at=PAYLOAD["created_at"],
        updated_at=PAYLOAD["updated_at"],
        score=score,
    )


@pytest.mark.parametrize("point_id", [uuid.UUID(int=7), str(uuid.UUID(int=7))])
def test_a_stored_record_is_the_validated_one_in_every_respect(point_id):
    made, expected = (
        record_from_payload(point_id, PAYLOAD).with_score(0.5),
        validated(point_id, 0.5),
    )
    assert made == expected
    assert made.model_dump() == expected.model_dump()
    assert made.model_dump(exclude_unset=True) == expected.model_dump(exclude_unset=True)
    assert made.model_fields_set == expected.model_fields_set
    assert repr(made) == repr(expected)
    assert made.model_copy(update={"score": 0.25}) == expected.model_copy(update={"score": 0.25})
    assert made.with_score(0.25) == expected.with_score(0.25)
    assert pickle.loads(pickle.dumps(made)) == expected
    assert copy.deepcopy(made) == expected
    assert MemoryRecord.model_validate(made.model_dump()) == made
    with pytest.raises(pydantic.ValidationError):  # frozen, as a validated record is
        made.score = 1.0  # type: ignore[misc]


def test_with_score_leaves_the_original_alone():
    made = record_from_payload(uuid.UUID(int=8), PAYLOAD)
    scored = made.with_score(0.75)
    assert (made.score, scored.score) == (None, 0.75)
    assert scored.metadata is made.metadata  # shared, as model_copy shares it


def test_stored_records_share_what_never_changes_and_their_copies_do_not():
    from executive.memory.store.base import _ALL_FIELDS_SET

    # Values as a store hands them back: a new string object per payload.
    fresh = {k: "".join(list(v)) if isinstance(v, str) else v for k, v in PAYLOAD.items()}
    assert fresh["type"] is not PAYLOAD["type"]
    first, second = record_from_payload("a", PAYLOAD), record_from_payload("b", fresh)
    assert first.model_fields_set is second.model_fields_set is _ALL_FIELDS_SET
    assert first.metadata["type"] is second.metadata["type"]  # one copy of a recurring value
    copied = first.model_copy(update={"score": 0.25})
    assert copied.model_fields_set is not _ALL_FIELDS_SET
    assert set(MemoryRecord.model_fields) == _ALL_FIELDS_SET

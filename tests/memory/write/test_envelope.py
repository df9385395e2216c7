from __future__ import annotations

import pytest

from executive.memory.taxonomy import harvest_run_id, run_id_date, slugify, valid_app_id
from executive.memory.write.classify import validate
from executive.memory.write.envelope import Defaults, content_key, normalise, stamp
from tests.memory.payloads import DEFAULTS, partial


@pytest.mark.parametrize(
    ("trigger", "actor"),
    [
        ("post-run", "worker"),
        ("failure-diagnosis", "worker"),
        ("post-retro", "human"),
        ("spec-merge", "human"),
        ("manual-harvest", "human"),
        ("practice-loop", "executive"),
    ],
)
def test_actor_is_stamped_from_the_trigger(trigger, actor):
    payload = stamp(partial("semantic", metadata={"trigger": trigger}), DEFAULTS)
    assert payload["metadata"]["actor"] == actor


def test_only_spec_merge_stamps_immutable():
    assert stamp(partial("principle"), DEFAULTS)["immutable"] is True
    assert stamp(partial("semantic"), DEFAULTS)["immutable"] is False
    assert stamp(partial("principle"), DEFAULTS)["metadata"]["immutable"] is True


def test_user_and_env_come_from_the_defaults():
    payload = stamp(partial("semantic"), Defaults(user_id="agent-x", env="test"))
    assert payload["user_id"] == "agent-x"
    assert payload["metadata"]["env"] == "test"


def test_the_content_key_is_stable_across_whitespace_case_and_end_punctuation():
    a = stamp(partial("semantic", text="The mirror resets connections."), DEFAULTS)
    b = stamp(partial("semantic", text="  the MIRROR   resets connections "), DEFAULTS)
    assert a["metadata"]["key"] == b["metadata"]["key"]


@pytest.mark.parametrize(
    "change",
    [
        {"text": "A different fact entirely."},
        {"app_id": "other-bundle"},
        {"metadata": {"type": "procedural", "confidence": 0.7}},
    ],
)
def test_the_content_key_changes_with_scope_type_or_text(change):
    a = stamp(partial("semantic"), DEFAULTS)
    b = stamp(partial("semantic", **change), DEFAULTS)
    assert a["metadata"]["key"] != b["metadata"]["key"]


def test_env_and_cohort_are_part_of_the_key():
    base = dict(user_id="u", app_id="a", type="semantic", text="t")
    assert content_key(env="prod", cohort=None, **base) != content_key(
        env="test", cohort=None, **base
    )
    assert content_key(env="test", cohort="c1", **base) != content_key(
        env="test", cohort="c2", **base
    )


def test_normalise():
    assert normalise("  Ünïcode\tTEXT.  ") == "ünïcode text"


def test_flat_metadata_carries_app_id_and_immutable_for_stores_without_app_id():
    payload = validate(stamp(partial("principle"), DEFAULTS))
    flat = payload.flat_metadata()
    assert flat["app_id"] == "_global"
    assert flat["immutable"] is True
    assert flat["key"] == payload.key


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Build the Greeting Page!", "build-the-greeting-page"),
        ("  --weird__Name--  ", "weird-name"),
        ("", "untitled"),
        ("x" * 80, "x" * 60),
    ],
)
def test_slugify(text, slug):
    assert slugify(text) == slug


def test_harvest_run_ids_start_with_the_date_and_end_with_a_nonce():
    run = harvest_run_id("greeting", on="2026-12-02")
    assert run.startswith("2026-12-02-greeting-")
    assert len(run.rsplit("-", 1)[1]) == 6
    assert run_id_date(run).isoformat() == "2026-12-02"
    assert harvest_run_id("greeting") != harvest_run_id("greeting")


def test_app_id_rules():
    assert valid_app_id("_global") and valid_app_id("_skill-x") and valid_app_id("my-app")
    assert not valid_app_id("_my-app") and not valid_app_id("My-App") and not valid_app_id("-a")


def test_the_writing_executive_is_stamped_validated_and_not_part_of_the_key():
    mine = stamp(partial("semantic"), Defaults(user_id="agent-test", executive="exec-a"))
    theirs = stamp(partial("semantic"), Defaults(user_id="agent-test", executive="exec-b"))
    assert mine["metadata"]["executive"] == "exec-a"
    assert mine["metadata"]["key"] == theirs["metadata"]["key"]  # the same lesson, one key
    assert validate(mine).flat_metadata()["executive"] == "exec-a"
    assert "executive" not in stamp(partial("semantic"), DEFAULTS)["metadata"]
    from executive.memory.write.classify import classify

    bad = stamp(partial("semantic"), Defaults(user_id="agent-test", executive="exec a\n"))
    assert [r.field for r in classify(bad)] == ["metadata.executive"]

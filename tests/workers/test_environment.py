from __future__ import annotations

import pytest

from executive.workers.environment import LeakRefused, build, guard

PARENT = {
    "PATH": "/usr/bin",
    "HOME": "/home/a",
    "LC_ALL": "C",
    "LANG": "C.UTF-8",
    "V3_MEM0_API_KEY": "m0-secret-value",
    "MEM0_DIR": "/x",
    "EXECUTIVE_QDRANT_API_KEY": "q-secret",
    "GITHUB_TOKEN": "ghp_x",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "OPERATOR_NAMED": "ok",
    "V3_MEMORY_ENABLED": "true",
}


def test_only_the_allow_list_and_named_variables_pass():
    env = build(PARENT, passthrough=["OPERATOR_NAMED"], extra={"GOAL_STEP": "1"})
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/a",
        "LC_ALL": "C",
        "LANG": "C.UTF-8",
        "OPERATOR_NAMED": "ok",
        "GOAL_STEP": "1",
    }
    guard(env, ["m0-secret-value"])


@pytest.mark.parametrize(
    "name", ["V3_MEM0_API_KEY", "MEM0_DIR", "EXECUTIVE_QDRANT_API_KEY", "V3_MEMORY_ENABLED"]
)
def test_the_guard_refuses_executive_tier_names(name):
    with pytest.raises(LeakRefused) as caught:
        guard(build(PARENT, passthrough=[name]))
    assert caught.value.names == [name]


def test_the_guard_refuses_a_key_under_another_name():
    with pytest.raises(LeakRefused) as caught:
        guard({"PATH": "/bin", "HARMLESS": "m0-secret-value"}, ["m0-secret-value"])
    assert caught.value.names == ["HARMLESS"]

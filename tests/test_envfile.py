from __future__ import annotations

from executive.envfile import render_env, unknown_environment_keys, unknown_keys
from executive.settings import variable_names
from tests.conftest import REPO


def test_example_file_is_the_rendered_template():
    # Regenerate with: python -c "from executive.envfile import render_env; print(render_env(), end='')" > .env.executive.example
    assert (REPO / ".env.executive.example").read_text() == render_env()


def test_every_variable_has_a_comment_and_a_line():
    lines = render_env().splitlines()
    for name in variable_names():
        # Second names of a variable: AGENT_PATH (EXECUTIVE_HOME), EXECUTIVE_SNAPSHOT_COMMIT
        # (the old name of EXECUTIVE_GIT_COMMIT).
        if name in ("AGENT_PATH", "EXECUTIVE_SNAPSHOT_COMMIT"):
            continue
        index = next(i for i, line in enumerate(lines) if line.startswith(f"{name}="))
        assert lines[index - 1].startswith("# ") and len(lines[index - 1]) > 4, name


def test_master_and_hooks_off_in_stage_order_and_cohort_empty():
    lines = [line for line in render_env().splitlines() if not line.startswith("#")]
    flags = [line for line in lines if line.startswith(("V3_MEMORY_ENABLED", "V3_MEM_HOOK_"))]
    assert flags == [
        "V3_MEMORY_ENABLED=false",
        "V3_MEM_HOOK_POST_RUN=false",
        "V3_MEM_HOOK_PRE_SPAWN=false",
        "V3_MEM_HOOK_PRE_WORK=false",
        "V3_MEM_HOOK_FAIL_DIAG=false",
        "V3_MEM_HOOK_POST_RETRO=false",
    ]
    assert "V3_MEM0_COHORT=" in lines


def test_misspelt_keys_of_ours_are_found_with_the_closest_name(tmp_path):
    env_file = tmp_path / ".env.executive"
    env_file.write_text(
        "V3_MEM_HOOK_POSTRUN=true\nV3_ZZZ=1\nV3_MEMORY_ENABLED=true\nGITHUB_TOKEN=not-ours\n"
    )
    assert unknown_keys(env_file) == [
        ("V3_MEM_HOOK_POSTRUN", "V3_MEM_HOOK_POST_RUN"),
        ("V3_ZZZ", None),
    ]
    assert unknown_keys(tmp_path / "missing") == []


def test_misspelt_keys_in_the_process_environment_are_found_and_names_read_elsewhere_are_not():
    environ = {
        "V3_MEM_HOOK_FAILDIAG": "true",
        "EXECUTIVE_HOME": "/srv/agent",  # read before the settings, by every command
        "EXECUTIVE_MODELS_DIR": "/opt/models",  # the embedder's
        "EXECUTIVE_HOEM": "/srv/agent",
        "V3_MEMORY_ENABLED": "true",
        "PATH": "/usr/bin",
    }
    assert unknown_environment_keys(environ) == [
        ("EXECUTIVE_HOEM", "EXECUTIVE_HOME"),
        ("V3_MEM_HOOK_FAILDIAG", "V3_MEM_HOOK_FAIL_DIAG"),
    ]

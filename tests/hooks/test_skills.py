from __future__ import annotations

import re

import pytest

from executive.hooks import skills
from executive.hookspecs import SPECS, HookName
from tests.hooks.conftest import description, fail_diag, post_run, pre_spawn

SENTINEL = "sentinel-7f3a9c"


def sample(hook: HookName) -> dict:
    contexts = {
        HookName.PRE_WORK: {"queued": [pre_spawn().work_item.model_dump()], "picked": SENTINEL},
        HookName.PRE_SPAWN: pre_spawn(last_error=SENTINEL).model_dump(mode="json"),
        HookName.POST_RUN: post_run(contract_id=SENTINEL).model_dump(mode="json"),
        HookName.FAIL_DIAG: fail_diag(3, [("r1", SENTINEL)]).model_dump(mode="json"),
        HookName.POST_RETRO: {
            "retro_path": f"learning/retrospectives/{SENTINEL}.md",
            "harvest_run": "2026-12-02-retro",
        },
    }
    return contexts[hook]


@pytest.mark.parametrize("hook", list(HookName))
def test_every_hook_skill_renders_with_no_placeholder_left(hook):
    text = skills.render(hook, sample(hook), mem_command="executive --home /srv/agent mem")
    assert not re.search(r"\{\{[A-Z_]+\}\}", text)
    assert SENTINEL in text  # the context reached the prompt
    assert "executive --home /srv/agent mem search" in text
    assert "Memory limitations" in text  # every memory skill reads the limitations first
    downstream = SPECS[hook].downstream
    assert skills.body(downstream).splitlines()[0] in text  # it names and carries its playbook


def test_context_text_is_never_expanded_as_a_placeholder():
    text = skills.render(HookName.PRE_SPAWN, {"title": "{{DOWNSTREAM}} {{MEM}}"}, mem_command="m")
    assert '"{{DOWNSTREAM}} {{MEM}}"' in text


@pytest.mark.parametrize("name", skills.SKILL_NAMES)
def test_every_skill_file_has_a_name_and_description(name):
    assert description(name)
    assert f"name: {name}" in skills.raw(name)


def test_the_reader_skill_forbids_writes_and_the_harvester_explains_them():
    reader = skills.body("memory-reader")
    assert "never write" in reader and "Never `add`" in reader
    harvester = skills.body("memory-harvester")
    assert "add --payload" in harvester and "principle" in harvester


def test_the_post_run_prompt_shows_the_model_what_the_worker_did_as_data():
    from tests.hooks.builtin.test_post_run import _experience

    text = skills.render(
        HookName.POST_RUN, post_run(vendor="claude", experience=_experience()), mem_command="mem"
    )
    assert "`experience` is what the worker did" in text
    context = text[text.index("## Context") :]
    assert '"path": "src/weather/parser.py"' in context
    assert '"then": "PYTHONPATH=src python -m pytest -q"' in context

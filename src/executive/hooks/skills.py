"""Skill files: what each hook does, in words; Python only loads and fills them in. A hook's
skill inlines its downstream playbook (the reader's or the harvester's) and the store's
limitations, so one rendered file is the whole prompt of an LLM hook run."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel

from executive.hooks.harvest import RUN_HARVEST
from executive.hookspecs import SPECS, HookName

_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_PLACEHOLDER = re.compile(r"\{\{[A-Z_]+\}\}")

SKILL_NAMES = (
    "memory-limitations",
    "memory-reader",
    "memory-harvester",
    *(spec.skill for spec in SPECS.values()),
)


class SkillError(RuntimeError):
    pass


@cache
def raw(name: str) -> str:
    """A skill file's text, frontmatter and all."""
    if name not in SKILL_NAMES:
        raise SkillError(f"unknown skill {name!r}")
    return (resources.files("executive.hooks") / "skills" / f"{name}.md").read_text()


def body(name: str) -> str:
    return _FRONTMATTER.sub("", raw(name), count=1).strip() + "\n"


def render(hook: HookName, context: BaseModel | dict[str, Any], *, mem_command: str) -> str:
    """The full prompt of ``hook``: its skill, the downstream playbook, the context."""
    spec = SPECS[hook]
    values = {
        "{{DOWNSTREAM}}": body(spec.downstream),
        "{{LIMITATIONS}}": body("memory-limitations"),
        "{{MEM}}": mem_command,
        **RUN_HARVEST.placeholders(),
    }
    text = body(spec.skill)
    # Downstream and limitations carry placeholders of their own: fill until none is left.
    for _ in range(3):
        for placeholder, value in values.items():
            text = text.replace(placeholder, value)
    leftover = set(_PLACEHOLDER.findall(text)) - {"{{CONTEXT_JSON}}"}
    if leftover:
        raise SkillError(f"skill {spec.skill} left placeholders unfilled: {sorted(leftover)}")
    # The context goes in last and once: its text is data, never expanded.
    data = context.model_dump(mode="json") if isinstance(context, BaseModel) else context
    return text.replace("{{CONTEXT_JSON}}", json.dumps(data, indent=2, ensure_ascii=False))

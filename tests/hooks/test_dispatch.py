"""Each declared hook bound once to its context class and built-in function."""

from __future__ import annotations

import typing

import pytest
from pydantic import ValidationError

from executive.hooks import dispatch
from executive.hooks.builtin import fail_diag, post_retro, post_run, pre_spawn, pre_work
from executive.hooks.context import PreSpawnContext
from executive.hooks.dispatch import BuiltinEngine, parse_context
from executive.hooks.engine import EngineOutput
from executive.hookspecs import SPECS, HookName
from tests.hooks.conftest import SAMPLE_CONTEXTS
from tests.hooks.conftest import pre_spawn as pre_spawn_context

pytestmark = pytest.mark.anyio


def test_every_declared_hook_has_its_code_in_the_declarations_order():
    assert list(dispatch.CONTEXTS) == list(SPECS)
    assert len(set(dispatch.CONTEXTS.values())) == len(dispatch.CONTEXTS)


def test_a_json_context_is_read_as_its_hooks_model():
    data = pre_spawn_context().model_dump(mode="json")
    assert isinstance(parse_context("pre-spawn-pack", data), PreSpawnContext)
    assert parse_context(HookName.PRE_SPAWN, data) == pre_spawn_context()
    with pytest.raises(ValidationError):
        parse_context("post-run-harvest", data)  # another hook's context
    with pytest.raises(ValueError, match="pre-spawn"):
        parse_context("pre-spawn", data)


MODULES = (pre_work, pre_spawn, post_run, fail_diag, post_retro)


@pytest.mark.parametrize("name", list(HookName))
async def test_the_builtin_engine_runs_the_function_that_reads_its_hooks_context(name, monkeypatch):
    # A function bound to the wrong hook would be told a context it cannot read.
    hints = {module: typing.get_type_hints(module.run) for module in MODULES}
    seen: list[tuple[object, object, object]] = []
    for module in MODULES:

        async def recorded(ctx, tools, module=module):
            seen.append((module, ctx, tools))
            return EngineOutput(final_text="bound")

        monkeypatch.setattr(module, "run", recorded)
    context, tools = SAMPLE_CONTEXTS[name](), object()
    output = await BuiltinEngine().run(SPECS[name], context, tools)  # type: ignore[arg-type]
    assert output.final_text == "bound"
    [(module, told, given)] = seen
    assert (told, given) == (context, tools)
    assert hints[module]["ctx"] is dispatch.CONTEXTS[name]
    assert hints[module]["return"] is EngineOutput


async def test_a_context_no_hook_is_told_is_refused_by_name():
    with pytest.raises(TypeError, match="pre-spawn-pack: no built-in code for object"):
        await BuiltinEngine().run(SPECS[HookName.PRE_SPAWN], object(), object())  # type: ignore[arg-type]

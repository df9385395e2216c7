"""A hook's context is built, redacted, or its failure is a logged value."""

from __future__ import annotations


def test_a_context_that_cannot_be_built_is_a_logged_none_and_one_that_can_is_redacted():
    from structlog.testing import capture_logs

    from executive.hooks.context import PostRetroContext
    from executive.loop.contexts import told
    from executive.redact import learn

    @told
    def broken(n: int) -> PostRetroContext:
        raise KeyError(f"no step {n}")

    @told
    def quoting(secret: str) -> PostRetroContext:
        return PostRetroContext(retro_path=f"learning/{secret}.md", harvest_run="2026-12-02-retro")

    learn(secrets=["ghp-told-secret-0123456789"])
    with capture_logs() as logs:
        assert broken(7) is None
    [line] = [e for e in logs if e["event"] == "hook.context_failed"]
    assert line["builder"] == "broken" and "no step 7" in line["error"]
    built = quoting("ghp-told-secret-0123456789")
    assert built is not None and "ghp-told-secret" not in built.retro_path


def test_a_context_the_loop_could_not_build_names_its_hook(tmp_path, monkeypatch):
    """The loop builds each hook's context where it knows the hook: a failed build says which,
    on the work path (A, B) and the idle one (E)."""
    import io
    import json

    import anyio

    from executive.hookspecs import HookName
    from executive.logs import configure_logging
    from executive.loop import contexts
    from executive.loop.executive import Executive
    from executive.memory.runtime import MemoryRuntime
    from executive.settings import load_settings
    from tests.loop.homes import MEMORY_ON, add_bundle, make_home

    home = make_home(
        tmp_path, **MEMORY_ON, EXECUTIVE_STORE="inmemory", EXECUTIVE_RETRO_AFTER_OUTCOMES="1"
    )
    add_bundle(home, "job", "echo ok > out.txt\n")

    def unusable() -> None:
        raise RuntimeError("the redactor is out")

    monkeypatch.setattr(contexts, "redactor", unusable)
    stream = io.StringIO()

    async def once() -> None:
        configure_logging(fmt="json", level="warning", stream=stream)
        config = load_settings(home)
        executive = Executive(config, MemoryRuntime(config))
        try:
            await executive.start()
            await executive.iterate(1)
            await executive.iterate(2)  # idle: the step's outcome makes a retrospective due
        finally:
            await executive.close()

    anyio.run(once)
    lines = [json.loads(x) for x in stream.getvalue().splitlines()]
    failed = [(e.get("hook"), e["builder"]) for e in lines if e["event"] == "hook.context_failed"]
    assert (HookName.PRE_WORK.value, "pre_work") in failed
    assert (HookName.PRE_SPAWN.value, "of_step") in failed
    assert (HookName.POST_RETRO.value, "hook_context") in failed

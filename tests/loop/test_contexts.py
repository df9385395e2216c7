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

"""``executive hooks run``: run one hook by hand and print what it did.

How an operator audits a hook before switching it on (the staged roll-out): the same
``run_memory_hook`` the loop calls, with its gating; ``--force`` runs a hook whose flags are
off, for the audit only. A forced write hook really writes.

The embedded store admits one process. With the daemon running, the built-in engine cannot
open it here, so the command refuses and says so; the claude engine can still run, because
the ``executive mem`` commands its agent runs are served by the daemon (fallback to the
built-in engine is then off). Without a daemon, a claude run serves this process's memory on
the home's socket while it lasts, so the agent's commands share one opened store.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from pydantic import ValidationError

from executive.cli.root import JsonFlag, app, emit_json, fail, load, load_quiet
from executive.config.flags import flag_fields
from executive.daemon.status import daemon_pid
from executive.home import Home
from executive.hooks.context import HookContext
from executive.hookspecs import SPECS, HookName
from executive.settings import Settings

if TYPE_CHECKING:
    from executive.hooks.result import HookResult

hooks = typer.Typer(
    help="Run a memory hook by hand, to audit it before switching it on.", no_args_is_help=True
)
app.add_typer(hooks, name="hooks")

ENGINES = ("builtin", "claude")
NAMES = tuple(name.value for name in HookName)


def read_context(hook: str, source: str) -> HookContext:
    """The context in ``source`` (a file, or ``-`` for stdin), or exit 2 naming the problem."""
    # The hooks' code (and the memory it reads) loads only for a run, as in `_run`.
    from executive.hooks.dispatch import parse_context

    try:
        raw = sys.stdin.read() if source == "-" else Path(source).read_text()
    except OSError as exc:
        fail(f"cannot read the context file {source}: {exc.strerror or exc}", code=2)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        fail(f"the context file {source} is not valid JSON: {exc}", code=2)
    if not isinstance(data, dict):
        fail(f"the context file {source} must hold a JSON object, not {type(data).__name__}", 2)
    try:
        return parse_context(hook, data)
    except ValidationError as exc:
        problems = [
            f"  {'.'.join(str(p) for p in err['loc']) or '(the object)'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
        fail(f"the context file {source} is not a valid {hook} context:\n" + "\n".join(problems), 2)


@hooks.command("run")
def run(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help=f"One of: {', '.join(NAMES)}.")],
    context: Annotated[
        str, typer.Option("--context", help="The hook's context as a JSON file ('-': stdin).")
    ],
    engine: Annotated[
        str | None, typer.Option(help="builtin or claude (default: EXECUTIVE_SKILL_ENGINE).")
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Audit run: ignore V3_MEMORY_ENABLED and the hook's flag. A write hook really writes.",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Run one hook through the runner (gating, time limit, logging) and print its result."""
    if name not in NAMES:
        fail(f"unknown hook {name!r}; one of: {', '.join(NAMES)}", code=2)
    if engine is not None and engine not in ENGINES:
        fail(f"unknown engine {engine!r}; one of: {', '.join(ENGINES)}", code=2)
    hook_context = read_context(name, context)
    spec = SPECS[HookName(name)]
    overrides: dict[str, Any] = {"skill_engine": engine} if engine else {}
    if force:
        overrides |= {"memory_enabled": True, flag_fields(Settings)[spec.flag]: True}
    settings = load_quiet(ctx, **overrides)
    home = Home(settings.home)
    pid = daemon_pid(home)
    if pid is not None and settings.store_in_home:
        if settings.skill_engine == "builtin":
            fail(
                f"the daemon (pid {pid}) holds the embedded memory store of {home.root}, so "
                "the built-in engine cannot open it here. Stop the daemon first, or audit "
                "with --engine claude, whose memory commands the daemon serves."
            )
        settings = load(ctx, **overrides, skill_engine_fallback=False)
    serve = settings.skill_engine == "claude" and pid is None
    result = anyio.run(_run, name, hook_context, settings, serve)
    if as_json:
        emit_json(
            {
                **result.model_dump(mode="json"),
                "outcome": result.outcome,
                "histogram": result.histogram,
                "tail": result.tail,
                "forced": force,
            }
        )
    else:
        _print(result, force)
    if result.outcome == "failed":
        raise typer.Exit(1)


async def _run(name: str, context: HookContext, settings: Settings, serve: bool) -> HookResult:
    # The runner, the memory and the surface load only for a run: every other command of
    # the CLI starts without them.
    from executive.hooks.runner import HookEnv, run_memory_hook
    from executive.memory.runtime import MemoryRuntime
    from executive.surface import control
    from executive.surface.build import build_surface
    from executive.workspace.ledger import WorkLedger
    from executive.workspace.spending import budget_of

    home = Home(settings.home)
    runtime = MemoryRuntime(settings)
    # A hand-run hook is paid like the daemon's: counted, and held by the day's cap.
    env = HookEnv(settings, runtime, WorkLedger(home.work_ledger), budget=budget_of(settings))
    try:
        if not serve:
            return await run_memory_hook(name, context, env)
        async with anyio.create_task_group() as tg:
            await tg.start(control.serve, build_surface(runtime), home.socket)
            result = await run_memory_hook(name, context, env)
            tg.cancel_scope.cancel()
        return result
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.close()


def _print(result: HookResult, forced: bool) -> None:
    spec = SPECS[HookName(result.hook)]
    kind = "write" if spec.writes else "read"
    label = "  [forced: flags ignored for this audit run]" if forced else ""
    typer.echo(
        f"hook      {result.hook} ({spec.letter}, {kind})  engine {result.engine or '-'}{label}"
    )
    if result.skipped:
        typer.echo(f"outcome   skipped: {result.reason}")
        typer.echo("          (--force runs it anyway, to audit it before switching it on)")
        return
    typer.echo(f"outcome   {result.outcome} in {result.duration_ms} ms")
    histogram = ", ".join(f"{tool}: {n}" for tool, n in result.histogram.items()) or "none"
    typer.echo(f"tools     {histogram} ({len(result.tool_calls)} calls)")
    if spec.writes:
        w = result.writes
        typer.echo(
            f"writes    attempted {w.attempted} · succeeded {w.succeeded} · "
            f"skipped {w.skipped} · failed {w.failed}"
        )
    if "fallback_from" in result.details:
        typer.echo(
            f"fallback  {result.details['fallback_from']} → {result.engine}: "
            f"{result.details.get('fallback_reason', '')}"
        )
    for refused in result.details.get("refused", []):
        typer.echo(f"refused   {refused['command']}")
    if result.error:
        typer.echo(f"error     {result.error}")
    if result.final_text and result.final_text != result.memory_pack:
        typer.echo(f"--- final text ---\n{result.final_text.rstrip()}")
    if result.memory_pack:
        typer.echo(f"--- memory pack ---\n{result.memory_pack.rstrip()}")

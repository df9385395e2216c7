"""``executive mem``: search, read and write memory; JSON with ``--json``, tables otherwise."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from executive import files
from executive.cli.root import JsonFlag, app, emit_json, fail, load_quiet

if TYPE_CHECKING:
    from executive.surface.control import RemoteSurface
    from executive.surface.operations import MemorySurface

    Surface = MemorySurface | RemoteSurface

mem = typer.Typer(help="Read and write memory (the executive's one surface).", no_args_is_help=True)
app.add_typer(mem, name="mem")


def on_surface(
    ctx: typer.Context, use: Callable[[Surface], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    """What ``use`` answers on this home's surface, or exit 1 printing the surface's error."""
    # The surface (and the memory under it) loads when a `mem` command runs, not for the
    # CLI's other commands.
    from executive.surface.build import open_surface
    from executive.surface.operations import SurfaceError

    settings = load_quiet(ctx)

    async def run() -> dict[str, Any]:
        async with open_surface(settings) as surface:
            return await use(surface)

    try:
        return anyio.run(run)
    except SurfaceError as exc:
        emit_json(exc.as_dict(), failed=True)


def call(ctx: typer.Context, op: str, args: dict[str, Any]) -> dict[str, Any]:
    return on_surface(ctx, lambda surface: surface.call(op, args))


def given(**args: Any) -> dict[str, Any]:
    """The options the operator gave (None is an option left out)."""
    return {k: v for k, v in args.items() if v is not None}


def parse_json(raw: str, what: str) -> Any:
    # Bounded: 50,000 nested brackets or a gigabyte are refused before the parser sees them.
    try:
        return files.parse_json(raw)
    except files.JsonLimitError as exc:
        emit_json({"ok": False, "error": f"{what} is not valid JSON: {exc}"}, failed=True)


def payload_items(payload: str | None, batch: str | None) -> list[Any]:
    if (payload is None) == (batch is None):
        fail("give exactly one of --payload JSON or --batch JSON")
    if payload is not None:
        return [parse_json(payload, "--payload")]
    items = parse_json(batch or "", "--batch")
    if not isinstance(items, list):
        emit_json({"ok": False, "error": "--batch must be a JSON array of payloads"}, failed=True)
    return items


def print_records(records: list[dict[str, Any]], empty: str = "(no memories matched)") -> None:
    if not records:
        typer.echo(empty)
        return
    for r in records:
        meta = r.get("metadata", {})
        score = f"[{r['score']:.3f}] " if r.get("score") is not None else ""
        typer.echo(f"{score}({meta.get('type', '?')}/{meta.get('importance', '?')}) {r['text']}")
        typer.echo(f"    id={r['id']}  app={r.get('app_id', '-')}  run={r.get('run_id', '-')}")
        if meta.get("files"):
            typer.echo(f"    files={', '.join(meta['files'])}")
        if meta.get("outdated_files"):
            typer.echo(
                f"    possibly outdated: {', '.join(meta['outdated_files'])} changed in run "
                f"{meta.get('outdated_by', '?')}"
            )
    typer.echo(f"{len(records)} result(s).")


def show(result: dict[str, Any], as_json: bool, human: Callable[[dict[str, Any]], None]) -> None:
    if as_json:
        emit_json(result)
    else:
        human(result)


@mem.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Option("--query", "-q", help="A full question or statement.")],
    app_id: Annotated[str | None, typer.Option(help="Only this app id.")] = None,
    run_id: Annotated[str | None, typer.Option(help="Only this run id.")] = None,
    type: Annotated[str | None, typer.Option("--type", help="Only this memory type.")] = None,
    top_k: Annotated[int | None, typer.Option(help="Results (default V3_MEM0_TOP_K).")] = None,
    min_confidence: Annotated[
        float | None, typer.Option(help="Floor on stored confidence.")
    ] = None,
    env: Annotated[str | None, typer.Option(help="Only this env (test, dev, prod).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Semantic search, ranked by score; filters apply to scope and stored metadata."""
    args = given(
        query=query,
        app_id=app_id,
        run_id=run_id,
        type=type,
        top_k=top_k,
        min_confidence=min_confidence,
        env=env,
    )
    show(call(ctx, "search", args), as_json, lambda r: print_records(r["results"]))


@mem.command()
def get(ctx: typer.Context, memory_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """One memory, as JSON."""
    emit_json(call(ctx, "get", {"id": memory_id}))


@mem.command()
def history(ctx: typer.Context, memory_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """A memory's version trail, as JSON."""
    emit_json(call(ctx, "history", {"id": memory_id}))


@mem.command("list")
def list_(
    ctx: typer.Context,
    app_id: Annotated[str | None, typer.Option(help="Only this app id.")] = None,
    env: Annotated[str | None, typer.Option(help="Only this env.")] = None,
    file: Annotated[
        str | None, typer.Option(help="Only memories about this file (a relative path).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Every memory of this installation: complete, no silent cap."""
    args = given(app_id=app_id, env=env, file=file)
    empty = "(no memories matched)" if args else "(the store is empty)"
    show(call(ctx, "list", args), as_json, lambda r: print_records(r["results"], empty))


@mem.command()
def validate(
    ctx: typer.Context,
    payload: Annotated[str | None, typer.Option(help="One payload, JSON.")] = None,
    batch: Annotated[str | None, typer.Option(help="A JSON array of payloads.")] = None,
) -> None:
    """Stamp defaults and list every rejection; exit 1 if any."""
    result = call(ctx, "validate", {"items": payload_items(payload, batch)})
    emit_json(result, failed=not result["ok"])


@mem.command()
def add(
    ctx: typer.Context,
    payload: Annotated[str | None, typer.Option(help="One payload, JSON.")] = None,
    batch: Annotated[str | None, typer.Option(help="A JSON array of payloads.")] = None,
) -> None:
    """Stamp, validate all, write each, confirm durable, ledger; exit 1 unless all succeeded."""
    result = call(ctx, "add", {"items": payload_items(payload, batch)})
    emit_json(result, failed=not result.get("ok"))


@mem.command()
def update(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[str | None, typer.Option(help="New text.")] = None,
    importance: Annotated[str | None, typer.Option(help="New importance.")] = None,
) -> None:
    """Change a memory's text or importance (metadata is merged, not replaced)."""
    emit_json(call(ctx, "update", given(id=memory_id, text=text, importance=importance)))


@mem.command()
def delete(ctx: typer.Context, memory_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Delete a memory (recorded in the ledger, so a rebuild does not bring it back)."""
    emit_json(call(ctx, "delete", {"id": memory_id}))


@mem.command()
def snapshot(ctx: typer.Context) -> None:
    """Write today's snapshot of this installation's memories to memory/snapshots/ (owner-only)."""
    emit_json(call(ctx, "snapshot", {}))


@mem.command()
def restore(
    ctx: typer.Context, file: Annotated[Path, typer.Argument(help="A snapshot JSON file.")]
) -> None:
    """Load a snapshot into a store that holds none of this installation's memories."""
    emit_json(call(ctx, "restore", {"file": str(file.resolve())}))


@mem.command()
def rebuild(ctx: typer.Context) -> None:
    """Wipe this installation's memories and replay the harvest ledgers: the repository wins."""
    from executive.surface.control import RemoteSurface
    from executive.surface.maintenance import Maintenance
    from executive.surface.operations import MemorySurface

    async def rebuild(surface: Surface) -> dict[str, Any]:
        if not isinstance(surface, MemorySurface) or not sys.stdout.isatty():
            if isinstance(surface, RemoteSurface):
                typer.echo("rebuilding in the running daemon; its log shows the progress", err=True)
            return await surface.call("rebuild", {})
        with typer.progressbar(length=1, label="rebuilding", file=sys.stderr) as bar:

            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)

            return await Maintenance(surface.runtime).rebuild(progress)

    emit_json(on_surface(ctx, rebuild))


@mem.command()
def drift(
    ctx: typer.Context,
    fix: Annotated[bool, typer.Option(help="Make the store match the ledgers.")] = False,
) -> None:
    """Compare the store with the harvest ledgers: missing, extra and changed memories."""
    result = call(ctx, "drift", {"fix": fix})
    emit_json(result, failed=not fix and not result.get("clean", True))


@mem.command()
def backfill(
    ctx: typer.Context,
    lane: Annotated[
        list[str] | None, typer.Option(help="A, B, C or D (repeatable; default all).")
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="Print the payloads; write nothing.")] = False,
) -> None:
    """Harvest the home's corpus: A principles, B retrospectives, C capabilities, D episodes."""
    lanes = [name.upper() for name in lane] if lane else None
    result = call(ctx, "backfill", {"lanes": lanes, "dry_run": dry_run})
    emit_json(result, failed=not result.get("ok", True))


@mem.command()
def purge(
    ctx: typer.Context,
    env: Annotated[str | None, typer.Option(help="Every memory of this env (test, dev).")] = None,
    cohort: Annotated[str | None, typer.Option(help="Every memory of this cohort.")] = None,
    app_id: Annotated[str | None, typer.Option(help="Every memory of this app id.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would go, by type; delete nothing.")
    ] = False,
) -> None:
    """Delete by env, cohort or app id; recorded in the ledger so a rebuild keeps them gone."""
    what = {k: v for k, v in {"env": env, "cohort": cohort, "app_id": app_id}.items() if v}
    if not what:
        fail("purge needs --env, --cohort or --app-id")
    if dry_run:
        emit_json(call(ctx, "purge", {**what, "dry_run": True}))
        return
    if not yes:
        if not sys.stdin.isatty():
            fail("purge deletes memories: pass --yes (no terminal to ask on)")
        typer.confirm(f"Delete every memory with {what} (recorded in the ledger)?", abort=True)
    result = call(ctx, "purge", what)
    emit_json(result, failed=not result.get("ok", True))


@mem.command()
def replay(ctx: typer.Context) -> None:
    """Send again every write the store never confirmed (the daemon does this on a schedule)."""
    emit_json(call(ctx, "replay", {}))

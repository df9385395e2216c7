"""``executive bundle add | list | show | retry | cancel``: the operator's bundle lifecycle."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from executive.cli.root import JsonFlag, app, emit_json, fail, load
from executive.daemon import status as status_mod
from executive.daemon.lock import AlreadyRunning, daemon_lock
from executive.home import Home
from executive.memory.read import PACK_HEADING
from executive.memory.taxonomy import slugify
from executive.settings import Settings
from executive.spend import usd
from executive.workspace import bundle as bundles
from executive.workspace import operator, spending
from executive.workspace.needs_you import error_tail
from executive.workspace.progress import duration, elapsed_seconds, running_step, wait_seconds

group = typer.Typer(help="Queue and inspect goal bundles.", no_args_is_help=True)
app.add_typer(group, name="bundle")


@group.command("add")
def add(
    ctx: typer.Context,
    title: Annotated[str, typer.Argument(help="What the goal is, in a few words.")],
    goal: Annotated[
        str | None, typer.Option(help="The goal in prose (default: the title).")
    ] = None,
    goal_file: Annotated[
        Path | None, typer.Option(help="Read the goal prose from this file.")
    ] = None,
    priority: Annotated[str, typer.Option(help="P0 (first) to P4.")] = "P3",
    vendor: Annotated[
        str | None, typer.Option(help="claude or command (default WORKER_VENDOR).")
    ] = None,
    command: Annotated[
        str | None,
        typer.Option(help="Worker argv for the command vendor, e.g. 'sh run.sh {output_dir}'."),
    ] = None,
    verify: Annotated[
        list[str] | None, typer.Option("--verify", help="A verifier command (repeatable).")
    ] = None,
    output_exists: Annotated[
        list[str] | None, typer.Option(help="A non-empty file the worker must write (repeatable).")
    ] = None,
    step: Annotated[
        list[str] | None, typer.Option("--step", help="A step title, in order (repeatable).")
    ] = None,
    max_attempts: Annotated[
        int | None, typer.Option(help="Failed attempts before blocking.")
    ] = None,
    timeout_seconds: Annotated[
        float | None, typer.Option(help="Wall-clock limit per attempt.")
    ] = None,
    app_id: Annotated[str | None, typer.Option(help="Memory scope (default: the slug).")] = None,
    slug: Annotated[str | None, typer.Option(help="Folder name (default: from the title).")] = None,
) -> None:
    """Write workspace/ondeck/<slug>/PROMPT.md; the daemon picks it up on its next iteration."""
    settings = load(ctx)
    home = _home(settings, "ondeck")
    if goal is not None and goal_file is not None:
        fail("give --goal or --goal-file, not both")
    exists = [{"builtin": "output_exists", "path": p} for p in output_exists or []]
    spec = _frontmatter(
        {
            "title": title,
            "priority": priority,
            "vendor": vendor,
            "command": command,
            "verifiers": [*exists, *({"run": v} for v in verify or [])],
            "max_attempts": max_attempts,
            "timeout_seconds": timeout_seconds,
            "app_id": app_id,
            "steps": [{"title": s} for s in step or []],
        }
    )
    if (spec.vendor or settings.worker_vendor) == "command" and not spec.command:
        fail("the command vendor needs --command")
    prose = goal_file.read_text() if goal_file else (goal or title)
    folder = _queue(home, slugify(slug or title), spec, prose, settings.worker_vendor)
    typer.echo(f"queued {folder.relative_to(home.root)}")


def _frontmatter(fields: dict[str, object]) -> bundles.Frontmatter:
    """The bundle's front matter, or the command fails naming every bad field."""
    try:
        return bundles.Frontmatter.model_validate(fields)
    except ValidationError as exc:
        fail(f"invalid bundle: {bundles.problems(exc)}")


def _queue(
    home: Home, name: str, spec: bundles.Frontmatter, prose: str, default_vendor: str
) -> Path:
    """The bundle's folder on deck with its PROMPT.md, read back as the daemon will read it."""
    folder = home.ondeck / name
    taken = operator.in_use(home, name)
    if taken is not None or folder.exists():
        where = taken.folder if taken is not None else folder
        free = operator.free_name(home, name)
        fail(
            f"a bundle named {name} is already in {where.relative_to(home.root)}: "
            f"choose another name (--slug {free} is free)"
        )
    folder.mkdir(parents=True)
    (folder / bundles.PROMPT_FILE).write_text(bundles.render(spec, prose))
    bundles.load(folder, default_vendor=default_vendor)  # what we wrote must parse
    return folder


@group.command("list")
def list_(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Every bundle, where it is, its step and attempts, and when a backing-off one runs next."""
    home = _home(load(ctx))
    live = status_mod.daemon_pid(home) is not None
    now = datetime.now(UTC)
    rows = [_summary(home, found, now, live) for found in operator.list_bundles(home)]
    if as_json:
        emit_json(rows)
        return
    typer.echo("\n".join(_list_line(row) for row in rows) or "no bundles")


def _list_line(row: dict[str, Any]) -> str:
    # The state, where it says more than the folder ("completed completed" said nothing).
    state = "" if row["status"] == row["where"] else row["status"]
    line = (
        f"{row['slug']:<32} {row['where']:<9} {state:<11} step {row['step']}/{row['steps']}  "
        f"failed attempts {row['attempts']}"
    )
    if row["running_seconds"] is not None:
        line += f"  attempt {row['attempts'] + 1} running for {duration(row['running_seconds'])}"
    if row["wait_seconds"]:
        line += f"  waits {duration(row['wait_seconds'])} more (until {row['retry_after']})"
    if row["cancel_pending"]:
        line += "  CANCEL PENDING (the daemon applies it when the running step ends)"
    if row["state_error"]:
        line += f"  STEPS.json unreadable: {row['state_error']}"
    return line


@group.command("show")
def show(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="The bundle's folder name.")],
    as_json: JsonFlag = False,
) -> None:
    """Steps, attempts, the last error's tail, Hook D's diagnosis and the last memory pack."""
    settings = load(ctx)
    home = _home(settings)
    try:
        found = operator.find(home, slug)
    except operator.OperatorError as exc:
        fail(str(exc))
    pack = _last_pack(settings.outputs / slug / "CLAUDE.md")
    now = datetime.now(UTC)
    live = status_mod.daemon_pid(home) is not None
    report = {
        **_summary(home, found, now, live),
        "folder": str(found.folder),
        "steps_detail": [s.model_dump() for s in found.state.steps] if found.state else [],
        "pack": pack,
        "spend": _spend(settings, found.slug),
    }
    if as_json:
        emit_json(report)
        return
    said = found.where if report["status"] == found.where else f"{found.where}, {report['status']}"
    typer.echo(f"{found.slug}  ({said})  {found.folder}")
    if report["running_seconds"] is not None:
        typer.echo(f"running for {duration(report['running_seconds'])}")
    if report["cancel_pending"]:
        typer.echo("cancel pending: the daemon applies it when the running step ends")
    if found.state_error:
        typer.echo(f"STEPS.json cannot be read: {found.state_error}")
    for step in found.state.steps if found.state else []:
        status = "blocked" if found.where == "blocked" and step.attempts else step.status
        left = wait_seconds(step.retry_after, now) if found.where != "blocked" else 0
        wait = f", waits {duration(left)} more (until {step.retry_after})" if left else ""
        typer.echo(
            f"  step {step.number} {step.title!r}: {status}, failed attempts {step.attempts}{wait}"
        )
        if step.last_error:
            typer.echo("    last error (its last lines):")
            for line in error_tail(step.last_error).splitlines():
                typer.echo(f"      {line}")
        if step.diagnosis:
            typer.echo("    Hook D's diagnosis:")
            for line in step.diagnosis.splitlines():
                typer.echo(f"      {line}")
    typer.echo("\n".join(_spend_lines(report["spend"])))
    typer.echo(f"last memory pack:\n{pack}" if pack else "last memory pack: none recorded")
    if found.where == "blocked":
        typer.echo(f"to retry: executive --home {home.root} bundle retry {slug}")


def _spend(settings: Settings, slug: str) -> dict[str, Any]:
    """What the bundle's paid runs cost, in all and per run, as the work ledger recorded it."""
    spent = spending.budget_of(settings).refresh()
    runs = spent.bundles.get(slug, [])
    return {"total": spent.bundle(slug).as_dict(), "runs": [r.as_dict() for r in runs]}


def _spend_lines(spend: dict[str, Any]) -> list[str]:
    total = spend["total"]
    if not total["runs"]:
        return ["spend: no paid runs"]
    lines = [
        f"spend: {usd(total['cost_usd'])} over {total['runs']} paid runs"
        + (f" ({total['not_reported']} not reported)" if total["not_reported"] else "")
    ]
    for run in spend["runs"]:
        tokens = (
            f"{run['input_tokens']} in, {run['output_tokens']} out, "
            f"{run['cache_read_tokens']} cache read, {run['cache_write_tokens']} cache write"
            if run["cost_usd"] is not None
            else "tokens not reported"
        )
        pack = f"; pack {run['pack_tokens']} tokens" if run["pack_tokens"] is not None else ""
        lines.append(f"  {run['kind']} {run['name']}: {usd(run['cost_usd'])} ({tokens}{pack})")
    return lines


@group.command("retry")
def retry(
    ctx: typer.Context, slug: Annotated[str, typer.Argument(help="A blocked bundle's name.")]
) -> None:
    """Queue a blocked bundle again, its attempts reset to zero (recorded in the work ledger)."""
    home = _home(load(ctx))
    try:
        target = operator.retry(home, slug)
    except operator.OperatorError as exc:
        fail(str(exc))
    typer.echo(f"queued {target.relative_to(home.root)} again (attempts reset)")


@group.command("cancel")
def cancel(
    ctx: typer.Context, slug: Annotated[str, typer.Argument(help="A queued bundle's name.")]
) -> None:
    """Park a queued or in-progress bundle in blocked/ (retry brings it back)."""
    home = _home(load(ctx))
    try:
        if status_mod.daemon_pid(home) is not None:
            typer.echo(_cancel_pending(operator.request_cancel(home, slug)))
            return
        with daemon_lock(home):
            target = operator.cancel(home, slug)
    except (operator.OperatorError, AlreadyRunning) as exc:
        fail(str(exc))
    typer.echo(f"cancelled: moved to {target.relative_to(home.root)}")


def _home(settings: Settings, folder: str = "workspace") -> Home:
    home = Home(settings.home)
    if not (path := getattr(home, folder)).is_dir():
        missing = path.relative_to(home.root)
        fail(f"{home.root} is not an agent home (no {missing}/); run: executive init {home.root}")
    return home


def _cancel_pending(found: operator.Located) -> str:
    if (step := running_step(found)) is None:
        return f"cancel pending: the running daemon cancels {found.slug} before its next iteration"
    return (
        f"cancel pending: {found.slug} is running step {step.number} (attempt "
        f"{step.attempts + 1}), which finishes first; then the daemon parks the bundle in "
        "blocked/ (unless that step was its last and passed: then it completes). `executive "
        "status` and `bundle list` show the cancel pending until then"
    )


def _summary(home: Home, found: operator.Located, now: datetime, live: bool) -> dict[str, Any]:
    """One bundle for ``list`` and ``show``: ``live`` says whether a daemon runs (with none, a
    step that began and never ended was interrupted, not running)."""
    state = found.state
    step = state.next_step() if state else None
    under_way = running_step(found)
    status = state.status if state else "unknown"
    if under_way is not None:
        status = "running" if live else "interrupted"
    waits = wait_seconds(step.retry_after, now) if step and found.where != "blocked" else 0
    return {
        "slug": found.slug,
        "where": found.where,
        "status": status,
        "steps": len(state.steps) if state else 0,
        "step": step.number if step else (len(state.steps) if state else 0),
        # Done: every step's failures (a step that passed on its retry failed once).
        "attempts": step.attempts if step else sum(s.attempts for s in state.steps) if state else 0,
        "running_seconds": (
            elapsed_seconds(under_way.started_at, now) if under_way and live else None
        ),
        "retry_after": step.retry_after if waits else "",
        "wait_seconds": waits,
        "cancel_pending": operator.cancel_pending(home, found.slug),
        "state_error": found.state_error,
    }


def _last_pack(claude_md: Path) -> str:
    """The memory pack of the last spawn: the pack section at the end of its ``CLAUDE.md``."""
    try:
        text = claude_md.read_text(errors="replace")
    except OSError:
        return ""
    start = text.find(PACK_HEADING)
    return text[start:].strip() if start >= 0 else ""

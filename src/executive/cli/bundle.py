"""``executive bundle add``: queue a goal from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from executive.cli.app import app, fail, load
from executive.home import Home
from executive.memory.taxonomy import slugify
from executive.workspace import bundle as bundles

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
        list[str] | None, typer.Option(help="A file the worker must produce (repeatable).")
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
    home = Home(settings.home)
    if not home.ondeck.is_dir():
        fail(
            f"{home.root} is not an agent home (no workspace/ondeck); run: executive init {home.root}"
        )
    if goal is not None and goal_file is not None:
        fail("give --goal or --goal-file, not both")
    prose = goal_file.read_text() if goal_file else (goal or title)
    verifiers: list[dict[str, object]] = [
        {"builtin": "output_exists", "path": p} for p in output_exists or []
    ]
    verifiers += [{"run": v} for v in verify or []]
    try:
        spec = bundles.Frontmatter.model_validate(
            {
                "title": title,
                "priority": priority,
                "vendor": vendor,
                "command": command,
                "verifiers": verifiers,
                "max_attempts": max_attempts,
                "timeout_seconds": timeout_seconds,
                "app_id": app_id,
                "steps": [{"title": s} for s in step or []],
            }
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors(include_url=False)
        )
        fail(f"invalid bundle: {problems}")
    if (spec.vendor or settings.worker_vendor) == "command" and not spec.command:
        fail("the command vendor needs --command")
    name = slugify(slug or title)
    folder = home.ondeck / name
    if folder.exists():
        fail(f"{folder} already exists; choose another --slug")
    folder.mkdir(parents=True)
    (folder / bundles.PROMPT_FILE).write_text(bundles.render(spec, prose))
    bundles.load(folder, default_vendor=settings.worker_vendor)  # what we wrote must parse
    typer.echo(f"queued {folder.relative_to(home.root)}")

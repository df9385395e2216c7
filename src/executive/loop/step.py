"""One attempt at one step: the worker's folder, its CLAUDE.md, its environment, the spawn,
the verifiers. What it returns says whether the step passed and, if not, why."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from executive.files import atomic_write
from executive.home import Home
from executive.logs import get_logger
from executive.settings import Settings
from executive.workers import claude_md, environment, process, vendors, verifiers
from executive.workers.verifiers import Check, VerifierResult
from executive.workspace.bundle import Bundle, CommandVerifier, OutputExists
from executive.workspace.state import StepState

log = get_logger(__name__)

ERROR_CHARS = 1500


@dataclass
class Attempt:
    contract_id: str
    passed: bool
    error: str = ""
    fatal: bool = False  # retrying cannot help (a refused spawn, a missing executable)
    results: list[VerifierResult] = field(default_factory=list)
    duration_seconds: float = 0.0
    output_changed: bool = True
    log_path: Path | None = None


def output_dir(settings: Settings, bundle: Bundle) -> Path:
    return settings.outputs / bundle.slug


def checks(bundle: Bundle) -> list[Check]:
    out = []
    for spec in bundle.spec.verifiers:
        if isinstance(spec, CommandVerifier):
            out.append(Check("command", spec.label, spec.run, spec.timeout_seconds))
        elif isinstance(spec, OutputExists):
            out.append(Check("output_exists", spec.label, spec.path))
        else:
            out.append(Check("git_status_clean", spec.label))
    return out


def goal_text(bundle: Bundle, step: StepState) -> str:
    specs = bundle.steps
    spec = specs[step.number - 1]
    lines = [f"# {bundle.title}", ""]
    if len(specs) > 1:
        lines += [f"You are on step {step.number} of {len(specs)}: **{step.title}**.", ""]
        lines += [f"{i}. {s.title}" for i, s in enumerate(specs, 1)] + [""]
    if spec.prompt:
        lines += [spec.prompt.strip(), ""]
    lines.append(bundle.goal)
    if step.attempts:
        lines += [
            "",
            f"This is attempt {step.attempts + 1}. The last attempt failed with:",
            "",
            "```",
            step.last_error[-800:],
            "```",
        ]
    return "\n".join(lines).strip() + "\n"


def _snapshot(folder: Path) -> set[tuple[str, int, int]]:
    seen = set()
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in {".git", ".executive"}]
        for name in files:
            path = Path(root) / name
            if path.name == claude_md.FILE_NAME and path.parent == folder:
                continue
            try:
                stat = path.stat()
            except OSError:
                continue
            seen.add((str(path.relative_to(folder)), stat.st_mtime_ns, stat.st_size))
    return seen


async def attempt(
    *,
    settings: Settings,
    home: Home,
    bundle: Bundle,
    step: StepState,
    vendor: str,
    contract_id: str,
    pack: str | None,
) -> Attempt:
    out = output_dir(settings, bundle)
    out.mkdir(parents=True, exist_ok=True)
    constitution = home.constitution.read_text() if home.constitution.is_file() else ""
    goal = goal_text(bundle, step)
    prompt_file = out / ".executive" / "PROMPT.md"
    atomic_write(prompt_file, goal)
    claude_md.write(
        out, claude_md.render(output_dir=out, constitution=constitution, goal=goal, pack=pack)
    )

    values = {
        "prompt_file": str(prompt_file),
        "output_dir": str(out),
        "bundle_dir": str(bundle.folder),
        "step": str(step.number),
        "attempt": str(step.attempts + 1),
    }
    env = environment.build(
        os.environ,
        passthrough=settings.worker_env_names,
        extra={
            "GOAL_BUNDLE": bundle.slug,
            "GOAL_STEP": str(step.number),
            "GOAL_ATTEMPT": str(step.attempts + 1),
            "GOAL_PROMPT_FILE": str(prompt_file),
            "GOAL_OUTPUT_DIR": str(out),
        },
    )
    try:
        environment.guard(env, settings.secret_values())
    except environment.LeakRefused as exc:
        log.error("worker.refused", contract_id=contract_id, variables=exc.names, reason=str(exc))
        return Attempt(contract_id, False, str(exc), fatal=True)

    if vendor == "command":
        argv = vendors.fill(bundle.spec.command or [], values)
    else:
        argv = vendors.claude_argv(
            settings.claude_bin,
            goal,
            max_turns=bundle.spec.max_turns or settings.max_turns_per_step,
            model=bundle.spec.model or settings.model,
        )
    before = _snapshot(out)
    day = datetime.now(UTC).date().isoformat()
    try:
        run = await process.run(
            argv,
            cwd=out,
            env=env,
            timeout_seconds=bundle.spec.timeout_seconds or settings.worker_timeout_ms / 1000,
            log_path=home.worker_logs / day / f"{contract_id}.log",
            pid_dir=home.pids,
            contract_id=contract_id,
        )
    except OSError as exc:
        log.error("worker.spawn_failed", contract_id=contract_id, argv0=argv[0], error=str(exc))
        return Attempt(
            contract_id, False, f"cannot start the worker ({argv[0]}): {exc}", fatal=True
        )

    result = Attempt(
        contract_id, False, duration_seconds=run.duration_seconds, log_path=run.log_path
    )
    result.output_changed = _snapshot(out) != before
    if run.timed_out:
        result.error = f"the worker timed out after {bundle.spec.timeout_seconds or settings.worker_timeout_ms / 1000:g}s"
        return result
    if run.exit_code != 0:
        result.error = (
            f"the worker exited with code {run.exit_code}:\n{run.tail(ERROR_CHARS).strip()}"
        )
        return result
    result.results = await verifiers.run_all(checks(bundle), out, env)
    failed = [r for r in result.results if not r.passed]
    if failed:
        result.error = "\n".join(
            f"verifier {r.verifier} failed: {r.message}"
            + (f"\n{r.evidence.strip()[-400:]}" if r.evidence.strip() else "")
            for r in failed
        )[-ERROR_CHARS:]
        return result
    result.passed = True
    return result

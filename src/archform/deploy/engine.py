"""The deploy state machine: checks first, then each phase once, recorded as it finishes.

- Without ``--from`` every phase runs, in order; each is idempotent, so a run after a
  successful one changes nothing.
- ``--from PHASE`` starts at PHASE; every earlier phase must have finished for this same
  blueprint (otherwise the generated tree or the stacks could be stale).
- A failed or killed phase stays not-done; the error names the ``--from`` to resume with.
- Tools a phase needs (the Pulumi CLI, ansible-playbook) are checked before anything is
  done, so a missing tool never leaves a half-deployed cluster.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from archform.deploy import phases
from archform.deploy.plan import PHASES, DeployPlan
from archform.deploy.serve import AwaitingRelease
from archform.deploy.state import DONE, FAILED, RUNNING, WAITING, DeployState
from archform.install import extra_hint
from archform.render.writer import MANIFEST
from archform.spec import UsageError
from archform.spec.provider import sdk_extras

LOG_FILE = "deploy.log"
PULUMI_INSTALL = "curl -fsSL https://get.pulumi.com | sh"

PhaseFn = Callable[[phases.Context], None]


class DeployFailed(Exception):
    """A phase failed; `phase` is where to resume."""

    def __init__(self, phase: str, message: str) -> None:
        self.phase = phase
        super().__init__(message)


def default_runners() -> dict[str, PhaseFn]:
    """The real phase implementations."""

    def ansible(ctx: phases.Context) -> None:
        for project in ctx.plan.ansible:
            changed = phases.run_playbook(ctx, project, "site.yml")
            ctx.reporter.say(f"  {project.path}/site.yml: changed={changed}")

    def acceptance(ctx: phases.Context) -> None:
        for project in ctx.plan.ansible:
            if project.slurm:
                phases.check_slurm_nodes(ctx, project)
            phases.run_playbook(ctx, project, "validate.yml")

    return {
        "generate": phases.run_generate,
        "pulumi": phases.run_pulumi,
        "ansible": ansible,
        "acceptance": acceptance,
        "serve": phases.run_serve,
    }


def phases_to_run(plan: DeployPlan, state: DeployState, start: str | None) -> tuple[str, ...]:
    """The phases this invocation runs; refuses a --from that would skip unfinished work."""
    if start is None:
        return plan.phases
    if start not in PHASES:
        raise UsageError(f"unknown phase {start!r}", "phases: " + ", ".join(PHASES))
    if start not in plan.phases:
        raise UsageError(
            f"this deploy has no {start} phase", "its phases: " + ", ".join(plan.phases)
        )
    index = plan.phases.index(start)
    if state.blueprint and state.blueprint != plan.digest:
        raise UsageError(
            f"the blueprint changed since the last deploy into {plan.out_dir}",
            "run without --from so every phase sees the new blueprint",
        )
    unfinished = [p for p in plan.phases[:index] if state.status(p) != DONE]
    if unfinished:
        raise UsageError(
            f"cannot start at {start}: {', '.join(unfinished)} has not finished",
            f"run with --from {unfinished[0]} (or without --from)",
        )
    return plan.phases[index:]


def preflight(plan: DeployPlan, todo: tuple[str, ...]) -> None:
    """Every tool the chosen phases need is there; raises UsageError (exit 2) otherwise."""
    if "pulumi" in todo:
        if shutil.which("pulumi") is None:
            raise UsageError(
                "the Pulumi CLI (`pulumi`) is not on PATH; the pulumi phase needs it. "
                f"Install it: {PULUMI_INSTALL}",
                "or see https://www.pulumi.com/docs/install/; then log in to a state "
                "backend (pulumi login) and rerun. Nothing was done.",
            )
        if importlib.util.find_spec("pulumi") is None:
            raise UsageError("the pulumi Python SDK is not installed", extra_hint(sdk_extras()[0]))
    if "ansible" in todo or "acceptance" in todo:
        if importlib.util.find_spec("ansible_runner") is None:
            raise UsageError("ansible-runner is not installed", extra_hint("ansible"))
        if phases.ansible_playbook() is None:
            raise UsageError("ansible-playbook is not on PATH", extra_hint("ansible"))


@contextmanager
def _lock(out_dir: Path) -> Iterator[None]:
    key = hashlib.sha256(str(out_dir).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"archform-deploy-{key}.lock"
    with path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"another archform deploy is running into {out_dir}", "wait for it to finish"
            ) from None
        yield


def deploy(
    ctx: phases.Context,
    *,
    start: str | None = None,
    runners: dict[str, PhaseFn] | None = None,
) -> str | None:
    """Run the plan's phases (from `start`), recording each as it finishes.

    Returns None when every phase is done, or why the deploy stopped early without failing
    (the serve phase waits for a promoted release; state "waiting", resume with --from).
    """
    plan, reporter = ctx.plan, ctx.reporter
    impl = runners if runners is not None else default_runners()
    state = DeployState.load(plan.state_dir)
    todo = phases_to_run(plan, state, start)
    preflight(plan, todo)
    with _lock(plan.out_dir):
        fresh = not (plan.out_dir / MANIFEST).is_file()
        if not fresh:
            reporter.attach_log(plan.state_dir / LOG_FILE)
            state.reset(plan.digest, todo)
        reporter.say(f"deploy {', '.join(plan.documents)} -> {plan.out_dir}")
        reporter.say(
            "phases: " + " -> ".join(p if p in todo else f"{p} (done)" for p in plan.phases)
        )
        for number, phase in enumerate(todo, plan.phases.index(todo[0]) + 1):
            reporter.say(f"[{number}/{len(plan.phases)}] {phase}", style="bold")
            if not fresh:
                state.set(phase, RUNNING)
            began = time.monotonic()
            try:
                impl[phase](ctx)
            except AwaitingRelease as exc:
                state.set(phase, WAITING)
                reporter.say(f"  {phase} waits: {exc}", style="yellow")
                reporter.say(f"deploy stopped before {phase}; log: {plan.state_dir / LOG_FILE}")
                return str(exc)
            except (phases.PhaseError, UsageError) as exc:
                if not fresh or (plan.out_dir / MANIFEST).is_file():
                    state.set(phase, FAILED)
                message = exc.render() if isinstance(exc, UsageError) else str(exc)
                reporter.say(f"  {phase} failed: {message}", style="red")
                raise DeployFailed(phase, f"phase {phase} failed") from exc
            if fresh:
                # the generate phase created the tree: state and log can live there now
                fresh = False
                reporter.attach_log(plan.state_dir / LOG_FILE)
                state.reset(plan.digest, todo)
            state.set(phase, DONE)
            reporter.say(f"  {phase} done in {time.monotonic() - began:.1f} s")
        reporter.say(f"deploy finished; log: {plan.state_dir / LOG_FILE}", style="green")
    return None

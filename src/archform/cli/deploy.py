"""`archform deploy BLUEPRINT [-o DIR] [--from PHASE] [--dry-run] [--stack NAME]`."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from archform.cli._core import fail, guarded


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("deploy")(deploy)


def deploy(
    blueprints: list[Path] = typer.Argument(
        ..., help="Blueprint file(s); references resolve across them."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Generated tree (default: ./<platform or first document>)."
    ),
    start: str | None = typer.Option(
        None, "--from", help="Resume at this phase: generate, pulumi, ansible, acceptance, serve."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan; touch nothing."),
    stack: str = typer.Option("prod", "--stack", help="Pulumi stack name for every project."),
) -> None:
    """Bootstrap: generate -> pulumi up -> ansible site.yml -> acceptance (validate.yml) -> serve.

    A Platform's fleet comes up without serving objects until its registry holds a promoted
    release; the serve phase then stops at the `archform promote` command (resume with
    --from serve).
    """
    from rich.console import Console

    from archform.deploy import DeployFailed, build_plan
    from archform.deploy import deploy as run_deploy
    from archform.deploy.phases import Context
    from archform.deploy.progress import Reporter
    from archform.spec import load_paths

    def run() -> None:
        check_stack(stack)
        if output is not None:
            check_output_dir(output)
        loaded = load_paths(blueprints)
        docs = list(loaded.documents)
        platforms = [d for d in docs if d.kind == "Platform"]
        out = output if output is not None else Path((platforms or docs)[0].name)
        plan = build_plan(loaded, docs, out, stack=stack)
        console = Console(highlight=False, soft_wrap=True)
        if dry_run:
            from archform.deploy.engine import phases_to_run
            from archform.deploy.state import DeployState

            todo = phases_to_run(plan, DeployState.load(plan.state_dir), start)
            typer.echo("dry run: nothing is changed")
            for line in plan.describe():
                typer.echo(line)
            typer.echo("would run: " + " -> ".join(todo))
            return
        reporter = Reporter(console, None)
        names = " ".join(str(b) for b in blueprints)
        try:
            waiting = run_deploy(Context(plan, loaded, docs, reporter), start=start)
        except DeployFailed as exc:
            fail(
                f"{exc}; the phases before it stay done",
                f"fix the cause, then resume: archform deploy {names} -o {out} "
                f"--from {exc.phase} (log: {plan.state_dir / 'deploy.log'})",
            )
        if waiting is not None:
            typer.echo(f"next: {waiting.split('promote a checkpoint: ', 1)[-1]}")
            typer.echo(f"then resume: archform deploy {names} -o {out} --from serve")

    guarded(run)


# Pulumi stack names: letters, digits, hyphens, underscores and periods, at most 100
# characters (https://www.pulumi.com/docs/iac/concepts/stacks/). The name is also a file
# name under the state folder, so org/project/ qualification is not taken here.
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def check_stack(stack: str) -> None:
    """--stack as Pulumi accepts it (a usage error before anything runs)."""
    if not STACK_NAME.fullmatch(stack) or stack in (".", ".."):
        fail(
            f"--stack {stack!r} is not a Pulumi stack name",
            "letters, digits, - _ . (at most 100 characters), e.g. --stack prod",
        )


def check_output_dir(output: Path) -> None:
    """-o must be a folder archform can own: not a filesystem root, not an existing file."""
    resolved = output.resolve()
    if resolved == Path(resolved.anchor) or resolved == Path.home().resolve():
        fail(f"-o {output}: refusing to generate into {resolved}", "e.g. -o ./deploy/prod")
    if resolved.exists() and not resolved.is_dir():
        fail(f"-o {output}: is not a folder", "pass a folder for the generated tree")

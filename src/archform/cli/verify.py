"""`archform verify DIR`: run the real validators over a generated tree."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import typer

from archform.cli._core import EXIT_FINDINGS, echo_err, fail, guarded


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("verify")(verify)


def verify(
    directory: Path = typer.Argument(..., help="A folder written by `archform generate`."),
    fmt: str = typer.Option("text", "--format", help="text or json"),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Fail on every skipped check, advisory ones (checkov) too. The default when the "
        "environment has CI=true.",
    ),
    allow_skips: bool = typer.Option(
        False,
        "--allow-skips",
        help="Exit 0 even when checks were skipped (missing tools). Without it a skipped "
        "substantive check (every check but checkov) fails the run.",
    ),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        "-j",
        help="Checks to run at the same time (default: the number of CPUs).",
        show_default=False,
    ),
    cache: bool = typer.Option(
        True,
        "--cache/--no-cache",
        help="Reuse results of checks whose inputs (files read, tool versions) were checked "
        "before, in $XDG_CACHE_HOME/archform/verify (ARCHFORM_VERIFY_CACHE overrides).",
    ),
    progress: bool | None = typer.Option(
        None,
        "--progress/--no-progress",
        help="Report each check's start and finish on stderr (default: on; a live line on a "
        "terminal, plain lines otherwise).",
        show_default=False,
    ),
) -> None:
    """Check generated artifacts with ansible-lint, slurmctld, Pulumi mocks, kubernetes-validate.

    Exit 0 only when nothing failed and no substantive check was skipped (every check but
    checkov; under CI=true or --strict none may be skipped); --allow-skips accepts skips.
    """
    from archform.cli.verify_progress import Progress
    from archform.verify import blocking_skips, builtin_checks, skip_policy
    from archform.verify.runner import default_jobs, run_checks

    def run() -> int:
        if not directory.is_dir():
            fail(f"{directory} is not a folder", "pass the -o folder of `archform generate`")
        if fmt not in ("text", "json"):
            fail(f"unknown format {fmt!r}", "use text or json")
        if jobs is not None and jobs < 1:
            fail(f"--jobs {jobs} must be at least 1", "omit it to use every CPU")
        if strict and allow_skips:
            fail("--strict and --allow-skips contradict each other", "pass one of them")
        ci = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
        policy = skip_policy(strict=strict, allow_skips=allow_skips, ci=ci)
        workers = jobs or default_jobs()
        names = [c.name for c in builtin_checks() if c.applies(directory)]
        start = time.perf_counter()
        if progress is False:
            runs = run_checks(directory, workers, cache=cache)
        else:
            with Progress(sys.stderr, names, live=sys.stderr.isatty()) as listener:
                runs = run_checks(directory, workers, listener, cache=cache)
        wall = time.perf_counter() - start
        results = [r for check in runs for r in check.results]
        if fmt == "json":
            typer.echo(
                json.dumps(
                    [
                        {
                            "check": r.check,
                            "artifact": r.artifact,
                            "status": r.status,
                            "detail": r.detail,
                        }
                        for r in results
                    ],
                    indent=2,
                )
            )
        else:
            for r in results:
                line = f"{r.status.upper():8} {r.check:24} {r.artifact}"
                typer.echo(line + (f"  {r.detail}" if r.detail else ""))
            for check in runs:
                typer.echo(f"{'TIME':8} {check.check:24} {check.seconds:.1f} s ({check.status})")
            counts = {
                s: sum(r.status == s for r in results) for s in ("passed", "failed", "skipped")
            }
            typer.echo(
                f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} "
                f"skipped ({len(runs)} checks, {workers} at a time, {wall:.1f} s)"
            )
        if not results:
            fail(f"nothing to verify in {directory}", "is it an archform output folder?")
        blocking = blocking_skips(results, policy)
        if blocking:
            skipped = ", ".join(dict.fromkeys(r.check for r in blocking))
            if policy == "strict":
                rule = f"{'--strict' if strict else 'CI=true'}: no check may be skipped"
            else:
                rule = "substantive checks were skipped: the tree is not verified"
            echo_err(
                f"error: {len(blocking)} skipped result(s) ({skipped}); {rule} (hint: install "
                "what each SKIPPED line names, or pass --allow-skips to accept the skips)"
            )
        failed = any(r.status == "failed" for r in results)
        return EXIT_FINDINGS if failed or blocking else 0

    code = guarded(run)
    raise typer.Exit(code)

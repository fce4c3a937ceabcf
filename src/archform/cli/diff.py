"""`archform diff OLD NEW` / `archform diff --git REF PATH...`: change impact between versions."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from archform.diff.engine import LintItem
    from archform.lint.finding import Finding
    from archform.spec import BlueprintSet

from archform.cli._core import EXIT_FINDINGS, fail, guarded

FORMATS = ("text", "md", "json")


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("diff")(diff)


def diff(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="OLD NEW (files or folders), or with --git: the paths to compare."),
    ] = None,
    git: Annotated[
        str | None,
        typer.Option(
            "--git",
            metavar="REF",
            help="Compare PATH... at git revision REF with the working tree.",
        ),
    ] = None,
    output_format: Annotated[
        str, typer.Option("--format", "-f", help="text, md (a PR comment) or json.")
    ] = "text",
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            metavar="CLASS",
            help="Exit 1 when a change is at or above CLASS: in-place, rolling-restart, "
            "node-replacement, data-loss-risk, cluster-wide-outage.",
        ),
    ] = None,
    policy: Annotated[
        bool, typer.Option("--policy", help="Print the update-policy table and exit.")
    ] = False,
    lint_findings: Annotated[
        bool,
        typer.Option("--lint/--no-lint", help="Also list lint findings the change adds and fixes."),
    ] = True,
) -> None:
    """Classify what changes between two blueprint versions, with resource and cost deltas."""
    from archform.diff import diff_sets
    from archform.diff.impact import Impact
    from archform.diff.report import to_json, to_markdown, to_text
    from archform.spec import load_paths

    if policy:
        from archform.diff.report import policy_text

        typer.echo(policy_text(), nl=False)
        return

    def run() -> int:
        paths_ = paths or []
        if output_format not in FORMATS:
            fail(f"unknown format {output_format!r}", f"choose one of {', '.join(FORMATS)}")
        threshold = None
        if fail_on is not None:
            try:
                threshold = Impact.parse(fail_on)
            except ValueError as exc:
                fail(str(exc))
        with tempfile.TemporaryDirectory(prefix="archform-diff-") as tmp:
            if git is not None:
                from archform.diff.gitref import materialize

                if not paths_:
                    fail("--git needs at least one PATH", "archform diff --git main blueprints/")
                old_files = materialize(git, paths_, Path(tmp))
                # a path deleted from the working tree: its documents show up as removed
                old = _load_at(git, old_files, Path(tmp))
                new = load_paths([p for p in paths_ if p.exists()])
            else:
                if len(paths_) != 2:
                    fail("give exactly two paths: OLD NEW", "or use --git REF PATH...")
                for path in paths_:
                    if not path.exists():
                        fail(f"{path} does not exist")
                old, new = load_paths([paths_[0]]), load_paths([paths_[1]])
        report = diff_sets(old, new)
        if lint_findings:
            import dataclasses

            new_items, fixed_items = _lint_delta(old, new)
            report = dataclasses.replace(report, lint_new=new_items, lint_fixed=fixed_items)
        render = {"text": to_text, "md": to_markdown, "json": to_json}[output_format]
        typer.echo(render(report), nl=False)
        if threshold is not None and report.at_or_above(threshold):
            return EXIT_FINDINGS
        return 0

    code = guarded(run)
    if code:
        raise typer.Exit(code)


def _load_at(ref: str, files: list[Path], root: Path) -> BlueprintSet:
    """Load files materialised from `ref`; problems name them `REF:path`, not the temp copy."""
    import dataclasses

    from archform.spec import SpecError, load_paths

    try:
        return load_paths(files)
    except SpecError as exc:
        prefix = str(root) + "/"
        problems = [
            dataclasses.replace(p, file=f"{ref}:{p.file.removeprefix(prefix)}")
            if p.file.startswith(prefix)
            else p
            for p in exc.problems
        ]
        raise SpecError(problems) from None


def _lint_delta(old: BlueprintSet, new: BlueprintSet) -> tuple[list[LintItem], list[LintItem]]:
    """Findings present only after (new) and only before (fixed), matched by fingerprint.

    Lives in the CLI because diff and lint are sibling layers that do not import each other.
    """
    from archform.diff.engine import LintItem
    from archform.lint.engine import lint

    before = [f for f in lint(old).findings if not f.suppressed]
    after = [f for f in lint(new).findings if not f.suppressed]
    seen_before = {f.fingerprint for f in before}
    seen_after = {f.fingerprint for f in after}

    def item(f: Finding) -> LintItem:
        return LintItem(f.rule, f.name, f.severity, f.document, f.path, f.message)

    return (
        [item(f) for f in after if f.fingerprint not in seen_before],
        [item(f) for f in before if f.fingerprint not in seen_after],
    )

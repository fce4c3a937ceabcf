"""`archform lint PATH...`: architecture anti-patterns with explained, located findings."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from archform.cli._core import EXIT_FINDINGS, EXIT_OK, guarded
from archform.cli._files import blueprint_files

if TYPE_CHECKING:
    from archform.lint.finding import Finding


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("lint")(lint)


def lint(
    paths: Annotated[
        list[Path], typer.Argument(help="Blueprint files or folders, loaded together.")
    ],
    output_format: Annotated[
        str, typer.Option("--format", help="text, json, sarif, github or junit.")
    ] = "text",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report here.")
    ] = None,
    select: Annotated[
        list[str] | None,
        typer.Option("--select", help="Only these codes or prefixes (comma-separated; repeat)."),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", help="Skip these codes or prefixes (comma-separated; repeat)."),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option("--fail-on", help="Exit 1 at or above: error (default), warning, info."),
    ] = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even with findings.")
    ] = False,
    diff_base: Annotated[
        str | None,
        typer.Option("--diff-base", help="Git revision: report only findings new since it."),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Config file (default: the nearest one found)."),
    ] = None,
    force_exclude: Annotated[
        bool,
        typer.Option(
            "--force-exclude",
            help="Filter files named on the command line too: skip those matching `exclude` "
            "and YAML that is not a blueprint (for pre-commit and CI, like ruff's).",
        ),
    ] = False,
    today: Annotated[
        str | None,
        typer.Option(
            "--today",
            help="Judge dates (suppression expiry, version end of support) as of this day, "
            "YYYY-MM-DD (default: ARCHFORM_TODAY, else the system date).",
        ),
    ] = None,
) -> None:
    """Lint blueprints. Exit 0 clean, 1 findings at or above --fail-on, 2 usage/blueprint error."""
    code = guarded(
        lambda: _run(
            paths,
            output_format,
            output,
            select or [],
            ignore or [],
            fail_on,
            exit_zero,
            diff_base,
            config,
            today,
            force_exclude,
        )
    )
    raise typer.Exit(code)


def _run(
    paths: list[Path],
    output_format: str,
    output: Path | None,
    select: list[str],
    ignore: list[str],
    fail_on: str | None,
    exit_zero: bool,
    diff_base: str | None,
    config_path: Path | None,
    today_text: str | None = None,
    force_exclude: bool = False,
) -> int:
    from archform.lint import config as cfg
    from archform.lint.engine import LintResult, lint, parse_today, today_from_env
    from archform.lint.finding import RANK
    from archform.lint.report import FORMATS, LintReport, render
    from archform.lint.rule import load_rules
    from archform.spec import UsageError, load_paths
    from archform.spec.discovery import is_blueprint_file

    if output_format not in FORMATS:
        raise UsageError(f"--format {output_format!r} is not known", "use " + ", ".join(FORMATS))
    registry = load_rules()
    source = config_path or cfg.discover(paths)
    if config_path is not None and not config_path.is_file():
        raise UsageError(f"--config {config_path}: no such file")
    settings = cfg.load_config(source) if source else cfg.LintConfig()
    if select and not cfg.split_codes(select):
        raise UsageError(
            f"--select {' '.join(repr(s) for s in select)} names no rule; nothing would be checked",
            "give rule codes or prefixes (TRN, NET001), or leave --select out for every rule",
        )
    chosen = cfg.select_rules(
        registry,
        cfg.split_codes(select) if select else settings.select,
        [*settings.ignore, *cfg.split_codes(ignore)],
    )
    if not chosen:
        raise UsageError(
            "no rule is left after --select/--ignore; nothing would be checked",
            "ignore fewer rules",
        )
    options = cfg.rule_options(registry, settings)
    threshold = cfg.parse_fail_on(fail_on) if fail_on is not None else settings.fail_on
    today = today_from_env() if today_text is None else parse_today(today_text, "--today")

    files = blueprint_files(paths, settings, force_exclude)

    def run(targets: list[Path]) -> LintResult:
        # the base revision's copies: the same content test, so a workflow file is no error
        kept = [t for t in targets if is_blueprint_file(t)]
        return lint(load_paths(kept), rules=chosen, options=options, today=today, registry=registry)

    blueprints = load_paths(files)
    result = lint(blueprints, rules=chosen, options=options, today=today, registry=registry)
    fixed: tuple[Finding, ...] = ()
    if diff_base is not None:
        from archform.lint.diff import compare, lint_at

        base, names = lint_at(diff_base, paths, run)
        if base is None:
            sys.stderr.write(
                f"note: no loadable blueprint under these paths at {diff_base}; "
                "every finding counts as new\n"
            )
        result, fixed = compare(result, base, names)
    report = LintReport(
        result=result,
        lines={f: blueprints.lines(f) for f in blueprints.texts},
        fixed=fixed,
        diff_base=diff_base,
        files=tuple(blueprints.texts),
    )
    color = (
        output_format == "text"
        and output is None
        and sys.stdout.isatty()
        and not os.environ.get("NO_COLOR")
    )
    text = render(output_format, report, color=color)
    if output is not None:
        from archform.spec.atomic import write_atomic

        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            # atomic: a full disk leaves the previous report whole, never a truncated SARIF
            write_atomic(output, text.encode("utf-8"))
        except OSError as exc:
            raise UsageError(
                f"--output {output}: {exc.strerror}", "free space or choose another file"
            ) from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    failing = [f for f in result.active() if RANK[f.severity] >= RANK[threshold]]
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_OK

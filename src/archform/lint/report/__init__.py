"""Output formats of `archform lint`: text, json, sarif, github, junit.

Each module renders a LintReport to a string; imports stay lazy so the plain-text path
loads nothing it does not use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from archform.lint.engine import LintResult
from archform.lint.finding import Finding

FORMATS = ("text", "json", "sarif", "github", "junit")


@dataclass(frozen=True)
class LintReport:
    """A lint result plus what the output needs besides findings."""

    result: LintResult
    lines: dict[str, list[str]]
    fixed: tuple[Finding, ...] = ()
    diff_base: str | None = None
    files: tuple[str, ...] = field(default_factory=tuple)


def render(fmt: str, report: LintReport, *, color: bool = False) -> str:
    """Render a report in one of FORMATS."""
    if fmt == "text":
        from archform.lint.report.text import render_text

        return render_text(report, color=color)
    if fmt == "json":
        from archform.lint.report.json_format import render_json

        return render_json(report)
    if fmt == "sarif":
        from archform.lint.report.sarif import render_sarif

        return render_sarif(report)
    if fmt == "github":
        from archform.lint.report.github import render_github

        return render_github(report)
    if fmt == "junit":
        from archform.lint.report.junit import render_junit

        return render_junit(report)
    raise ValueError(f"unknown format {fmt!r}")

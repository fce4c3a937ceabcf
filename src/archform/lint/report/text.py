"""Human output: `file:line:col: CODE [severity] message`, the source line, a caret, a hint.

Lines are lists of (text, style) segments: joined as plain text, or printed with rich
styles when colour is on (a TTY without NO_COLOR); rich is imported only then.
"""

from __future__ import annotations

from archform.lint.finding import Finding
from archform.lint.report import LintReport

Line = list[tuple[str, str]]
STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}


def _frame(finding: Finding, lines: list[str]) -> list[Line]:
    if not 0 < finding.line <= len(lines):
        return []
    number = str(finding.line)
    pad = " " * len(number)
    source = lines[finding.line - 1].rstrip("\n")
    width = max(1, finding.end_column - finding.column)
    caret = " " * (finding.column - 1) + "^" * width
    return [
        [(f" {pad} |", "blue")],
        [(f" {number} | ", "blue"), (source, "")],
        [(f" {pad} | ", "blue"), (caret, STYLE[finding.severity])],
    ]


def _summary(report: LintReport) -> str:
    counts = report.result.counts()
    total = counts["error"] + counts["warning"] + counts["info"]
    docs = report.result.documents
    suppressed = f", {counts['suppressed']} suppressed" if counts["suppressed"] else ""
    scope = f" new since {report.diff_base}" if report.diff_base else ""
    if not total:
        return (
            f"No{scope} findings in {docs} document(s) "
            f"({len(report.result.rules)} rules{suppressed})."
        )
    return (
        f"Found {total}{scope} finding(s): {counts['error']} error(s), {counts['warning']} "
        f"warning(s), {counts['info']} info in {docs} document(s){suppressed}."
    )


def lines_of(report: LintReport) -> list[Line]:
    """The styled lines of the text report."""
    out: list[Line] = []
    for f in report.result.active():
        out.append(
            [
                (f"{f.file}:{f.line}:{f.column}: ", "bold"),
                (f"{f.rule} [{f.severity}] ", STYLE[f.severity]),
                (f.message, ""),
            ]
        )
        out.extend(_frame(f, report.lines.get(f.file, [])))
        if f.hint:
            out.append([("  hint: ", "green"), (f.hint, "")])
        out.append([])
    for f in report.fixed:
        out.append(
            [
                ("fixed: ", "green"),
                (f"{f.file}:{f.line}:{f.column}: ", "bold"),
                (f"{f.rule} [{f.severity}] {f.message}", ""),
            ]
        )
    out.append([(_summary(report), "bold")])
    return out


def render_text(report: LintReport, *, color: bool = False) -> str:
    """Plain text, or rich-coloured text for a terminal."""
    lines = lines_of(report)
    if not color:
        return "".join("".join(text for text, _ in line) + "\n" for line in lines)
    from io import StringIO

    from rich.console import Console
    from rich.text import Text

    buffer = StringIO()
    console = Console(file=buffer, force_terminal=True, highlight=False, soft_wrap=True)
    for line in lines:
        text = Text()
        for piece, style in line:
            text.append(piece, style=style or None)
        console.print(text)
    return buffer.getvalue()

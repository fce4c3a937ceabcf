"""GitHub Actions workflow commands (`::error file=...::message`).

GitHub shows at most 10 annotations per type (error, warning, notice) per step; the
findings beyond that are summarised in one `::notice::` line so nothing is silently lost.
"""

from __future__ import annotations

from collections import Counter

from archform.lint.report import LintReport

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
PER_TYPE = 10


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: LintReport) -> str:
    """One workflow command per finding, capped per type, plus an overflow notice."""
    shown: Counter[str] = Counter()
    hidden: Counter[str] = Counter()
    out: list[str] = []
    for f in report.result.active():
        kind = COMMAND[f.severity]
        if shown[kind] >= PER_TYPE:
            hidden[kind] += 1
            continue
        shown[kind] += 1
        props = (
            f"file={_prop(f.file)},line={f.line},col={f.column},endColumn={f.end_column},"
            f"title={_prop(f'{f.rule} {f.name}')}"
        )
        out.append(f"::{kind} {props}::{_data(f'{f.message} (hint: {f.hint})')}")
    if hidden:
        parts = ", ".join(f"{n} more {kind}(s)" for kind, n in sorted(hidden.items()))
        note = (
            f"{parts} not annotated (GitHub shows {PER_TYPE} per type per step); "
            "run archform lint locally or use --format sarif for all"
        )
        out.append(f"::notice title=archform::{_data(note)}")
    return "".join(line + "\n" for line in out)

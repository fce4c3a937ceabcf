"""Shared by every peer reader's tests: `# expect:` / `# must-not:` markers, import round trip.

A peer test file carries `# must-not: CODE, ...` on a line of its own (what an expert would
not report) and `# expect: CODE` (or `CODE[severity]`, comma-separated) at the end of each
line where a finding must be. `assert_findings` lints the file with every rule and requires
the exact set of (line, code); `round_trip` imports the file and lints the blueprint written.
A file whose first line is `# error: LINE:COL` is one the peer's own schema (or archform)
refuses: `assert_refused` requires exactly one problem, at that position.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from archform.lint.engine import lint
from archform.lint.rule import load_rules
from archform.spec import SpecError, load_paths, load_text
from archform.spec.peers.emit import render as render_import

TODAY = dt.date(2026, 11, 30)
EXPECT = re.compile(r"#\s*expect:\s*(.+)$")
MUST_NOT = re.compile(r"^#\s*must-not:\s*(.+)$")
ITEM = re.compile(r"^([A-Z]{3}\d{3})(?:\[(error|warning|info)\])?$")
ERROR = re.compile(r"^#\s*error:\s*(\d+):(\d+)$")


def refusal(path: Path) -> tuple[int, int] | None:
    """The (line, column) of the error a refused file names on its first line, else None."""
    match = ERROR.match(path.read_text("utf-8").splitlines()[0])
    return (int(match.group(1)), int(match.group(2))) if match else None


def split(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """(files linted, files refused)."""
    return [p for p in files if refusal(p) is None], [p for p in files if refusal(p) is not None]


def assert_refused(path: Path) -> str:
    """Loading the file fails with one problem at the position its first line names."""
    with pytest.raises(SpecError) as caught:
        load_paths([path])
    (problem,) = caught.value.problems
    assert (problem.line, problem.column) == refusal(path), problem.render()
    return problem.render()


def expected(path: Path) -> tuple[set[tuple[int, str]], dict[tuple[int, str], str], set[str]]:
    """(line, code) pairs, the severities given as CODE[severity], and the must-not codes."""
    pairs: set[tuple[int, str]] = set()
    severities: dict[tuple[int, str], str] = {}
    must_not: set[str] = set()
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        banned = MUST_NOT.match(line)
        if banned:
            must_not |= {c.strip() for c in banned.group(1).split(",")}
            continue
        match = EXPECT.search(line)
        if not match:
            continue
        for item in match.group(1).split(","):
            parsed = ITEM.match(item.strip())
            assert parsed, f"{path.name}:{number}: bad marker {item!r}"
            pairs.add((number, parsed.group(1)))
            if parsed.group(2):
                severities[(number, parsed.group(1))] = parsed.group(2)
    return pairs, severities, must_not


def assert_findings(path: Path) -> None:
    """The file's findings are exactly its markers, at their lines, none of its must-nots."""
    want, severities, must_not = expected(path)
    assert must_not, f"{path.name}: name what must not fire (# must-not: ...)"
    assert must_not <= set(load_rules().codes), f"{path.name}: unknown code in must-not"
    result = lint(load_paths([path]), today=TODAY)
    got = {(f.line, f.rule) for f in result.findings}
    assert all(f.file == str(path) for f in result.findings)
    assert got == want, f"{path.name}: unexpected {got - want}, missing {want - got}"
    assert not must_not & {f.rule for f in result.findings}
    for f in result.findings:
        if (f.line, f.rule) in severities:
            assert f.severity == severities[(f.line, f.rule)], f"{path.name}:{f.line} {f.rule}"
        elif f.rule == "LNT003":
            assert f.severity == "info", f"{path.name}:{f.line}: mark it LNT003[{f.severity}]"


def round_trip(path: Path) -> tuple[list[str], list[str], str]:
    """(codes linting the peer file, LNT003 left out; codes linting its import; import text)."""
    loaded = load_paths([path])
    (doc,) = loaded.documents
    assert doc.peer is not None
    text = render_import(doc.peer, doc.file)
    source = lint(loaded, today=TODAY).findings
    imported = lint(load_text(text, "imported.yaml"), today=TODAY).findings
    return (
        sorted({f.rule for f in source if f.rule != "LNT003"}),
        sorted({f.rule for f in imported}),
        text,
    )

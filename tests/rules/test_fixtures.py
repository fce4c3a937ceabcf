"""One parametrised runner: every fixture blueprint, linted with only its rule selected.

`# expect: CODE` (optionally `CODE[severity]`, comma-separated) marks the exact line of
each expected finding; the set of (line, code[, severity]) must match exactly.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from archform.lint.engine import lint
from archform.lint.rule import load_rules
from archform.spec import load_paths

FIXTURES = Path(__file__).parent / "fixtures"
TODAY = dt.date(2026, 11, 30)
EXPECT = re.compile(r"#\s*expect:\s*(.+)$")
ITEM = re.compile(r"^([A-Z]{3}\d{3})(?:\[(error|warning|info)\])?$")


def _cases() -> list[object]:
    out = []
    for path in sorted(FIXTURES.glob("*/*.yaml")):
        out.append(pytest.param(path, id=f"{path.parent.name}-{path.stem}"))
    return out


def expected(path: Path) -> tuple[set[tuple[int, str]], dict[tuple[int, str], str]]:
    """(line, code) pairs and the severities given as CODE[severity]."""
    pairs: set[tuple[int, str]] = set()
    severities: dict[tuple[int, str], str] = {}
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        match = EXPECT.search(line)
        if not match:
            continue
        for item in match.group(1).split(","):
            parsed = ITEM.match(item.strip())
            assert parsed, f"{path.name}:{number}: bad expect marker {item!r}"
            pairs.add((number, parsed.group(1)))
            if parsed.group(2):
                severities[(number, parsed.group(1))] = parsed.group(2)
    return pairs, severities


@pytest.mark.parametrize("path", _cases())
def test_fixture(path: Path) -> None:
    code = path.parent.name
    rule = load_rules().get(code)
    assert rule is not None, f"fixture folder {code} names no rule"
    want, severities = expected(path)
    if path.name.startswith("fail_"):
        assert want, f"{path.name}: a fail_ fixture needs at least one '# expect: {code}'"
    else:
        assert path.name.startswith("pass_"), f"{path.name}: name it pass_* or fail_*"
        assert not want, f"{path.name}: a pass_ fixture must not expect findings"
    result = lint(load_paths([path]), rules=[rule], today=TODAY)
    got = {(f.line, f.rule) for f in result.findings}
    assert got == want, "\n".join(
        f"{f.line}:{f.column} {f.rule} {f.message}" for f in result.findings
    )
    for f in result.findings:
        assert f.message and f.hint, f"{f.rule} finding without message or hint"
        if (f.line, f.rule) in severities:
            assert f.severity == severities[(f.line, f.rule)]

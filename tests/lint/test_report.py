"""Report details: colour only when asked, token ends for carets, fingerprint inputs."""

from __future__ import annotations

import re

from archform.lint.engine import lint
from archform.lint.finding import fingerprint, token_end
from archform.lint.report import LintReport, render
from archform.spec import load_text
from support.lint_cases import BAD, TODAY


def _report() -> LintReport:
    blueprints = load_text(BAD, "bad.yaml")
    result = lint(blueprints, today=TODAY)
    return LintReport(result, {"bad.yaml": blueprints.lines("bad.yaml")})


def test_colour_only_when_requested() -> None:
    plain = render("text", _report(), color=False)
    coloured = render("text", _report(), color=True)
    assert "\x1b[" not in plain
    assert "\x1b[" in coloured
    strip = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert strip == plain


def test_token_end() -> None:
    assert token_end("  regions: [a, b]", 3) == 10
    assert token_end('  ssh_cidrs: ["0.0.0.0/0"]', 15) == 26
    assert token_end("    - 10.0.0.0/8  # comment", 7) == 17
    assert token_end("x", 5) == 6


def test_fingerprint_ignores_file_and_line_but_not_document() -> None:
    a = fingerprint("TRN001", "demo", "placement.regions", ["a", "b"])
    assert a == fingerprint("TRN001", "demo", "placement.regions", ["a", "b"])
    assert a != fingerprint("TRN001", "other", "placement.regions", ["a", "b"])
    assert a != fingerprint("TRN002", "demo", "placement.regions", ["a", "b"])
    assert fingerprint("X", "d", "p", {"b": 1, "a": 2}) == fingerprint(
        "X", "d", "p", {"a": 2, "b": 1}
    )

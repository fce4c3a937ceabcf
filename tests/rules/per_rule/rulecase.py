"""Support for the tests of one rule each: tests/rules/per_rule/test_<code>.py.

bench/mutation.py runs this folder with `-k <CODE>` for each rule's mutants, and pytest's `-k`
matches the module name, so a file named after its rule is run for that rule's mutants only.
Expected numbers in these tests are worked from cited sources, never copied from the rule's output.
"""

from __future__ import annotations

from pathlib import Path

from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.spec import load_paths, load_text

FIXTURES = Path(__file__).parent.parent / "fixtures"


def findings(code: str, text: str | None = None, path: Path | None = None) -> list[Finding]:
    """The findings of one rule on a blueprint given as text or as a file."""
    rule = load_rules().get(code)
    assert rule is not None, code
    loaded = load_paths([path]) if path is not None else load_text(text or "", "t.yaml")
    return list(lint(loaded, rules=[rule]).findings)

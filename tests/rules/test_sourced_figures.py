"""A figure a rule quotes in its findings ("34% lower throughput") names its source.

Percentages written into a rule's code reach every user who trips the rule; each must also
appear in the rule's References section, beside the public source it comes from. Figures
computed from the blueprint or from options (`{x:.0%}`) are not quoted and not checked.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys

import pytest

from archform.lint.rule import Rule, load_rules

FIGURE = re.compile(r"(?<![\w.:])\d+(?:\.\d+)?\s?%")


def _quoted_figures(module_name: str) -> set[str]:
    tree = ast.parse(inspect.getsource(sys.modules[module_name]))
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    texts = [
        node.value
        for stmt in body
        for node in ast.walk(stmt)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    return {m.group(0).replace(" ", "") for text in texts for m in FIGURE.finditer(text)}


@pytest.mark.parametrize("rule", list(load_rules()), ids=lambda r: r.code)
def test_quoted_figures_are_in_the_references(rule: Rule) -> None:
    references = rule.section("References").replace(" ", "")
    unsourced = sorted(f for f in _quoted_figures(rule.module) if f not in references)
    assert not unsourced, f"{rule.code} quotes {unsourced} with no source in its References"


def test_the_checker_sees_a_quoted_figure() -> None:
    assert FIGURE.findall("measured 34% lower throughput; threshold {x:.0%}") == ["34%"]

"""INF003 (a region whose GPU pool may shrink to one node): the threshold and its option.

The rule flags min_nodes_per_region below `min_nodes` (default 2: with one node, a node failure
or a drain is an outage; Kubernetes, disruptions,
https://kubernetes.io/docs/concepts/workloads/pods/disruptions/). At or above the threshold
nothing is flagged, and the option moves the threshold.
"""

from __future__ import annotations

import pydantic
import pytest
from rulecase import FIXTURES

from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.spec import load_text

TEXT = (FIXTURES / "INF003" / "pass_doc_example.yaml").read_text("utf-8")


def _findings(low: int, min_nodes: int | None = None) -> list[Finding]:
    text = TEXT.replace("min_nodes_per_region: 2", f"min_nodes_per_region: {low}", 1)
    assert text != TEXT or low == 2
    rule = load_rules().get("INF003")
    assert rule is not None
    options = {} if min_nodes is None else {"INF003": rule.options(min_nodes=min_nodes)}
    return list(lint(load_text(text, "t.yaml"), rules=[rule], options=options).findings)


@pytest.mark.parametrize(("low", "flagged"), [(0, True), (1, True), (2, False), (3, False)])
def test_default_threshold_is_two_nodes(low: int, flagged: bool) -> None:
    got = _findings(low)
    assert [(f.line, f.rule) for f in got] == ([(9, "INF003")] if flagged else [])


def test_option_moves_the_threshold() -> None:
    (hit,) = _findings(3, min_nodes=4)
    assert hit.message.startswith("3 GPU node(s) per region at minimum; threshold: >= 4")
    assert hit.hint == "set min_nodes_per_region: 4"
    assert _findings(4, min_nodes=4) == []
    assert _findings(5, min_nodes=4) == []


def _accepted(value: int) -> bool:
    rule = load_rules().get("INF003")
    assert rule is not None
    try:
        rule.options(min_nodes=value)
    except pydantic.ValidationError:
        return False
    return True


def test_min_nodes_option_range() -> None:
    # 0 could never flag anything (min_nodes_per_region is never negative), so it is refused
    # like any other meaningless threshold; 1 is the smallest that can flag (a zero-node
    # floor). The ceiling is archform's cap for count thresholds, 100,000 (also SCH004,
    # INF009): a value past it is a typo, refused at the config line instead of flagging
    # every fleet.
    cases = {-1: False, 0: False, 1: True, 2: True, 99_999: True, 100_000: True, 100_001: False}
    assert {v: _accepted(v) for v in cases} == cases

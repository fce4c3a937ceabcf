"""INF009 (capacity below the traffic peak): options' ranges, and every fleet of a file.

The options are the capacity model's assumptions (archform.estimate.inference.capacity):
throughputs in tokens/s per GPU must be positive (a rate of 0 sizes infinitely many replicas);
p99_factor is the p99 latency over the mean request time W of the closed loop (the module's
docstring), so below 1 it would put the 99th percentile under the mean of a queue whose times
are not all equal; knee_concurrency counts concurrent sequences, at least one. The ceilings
are archform's caps for such thresholds (1e7 tok/s, 100x, 100,000 sequences): a value past
them is a typo, refused at the config line.
"""

from __future__ import annotations

import re
from typing import Any

import pydantic
import pytest
from rulecase import FIXTURES, findings

from archform.lint.rule import load_rules


def _accepted(**value: Any) -> bool:
    rule = load_rules().get("INF009")
    assert rule is not None
    try:
        rule.options(**value)
    except pydantic.ValidationError:
        return False
    return True


RATE = {-0.5: False, 0: False, 0.5: True, 1: True, 1e7: True, 1e7 + 0.5: False, 2e7: False}


@pytest.mark.parametrize("option", ["knee_tokens_per_gpu", "single_tokens_per_gpu"])
def test_throughput_options_are_positive_rates(option: str) -> None:
    assert {v: _accepted(**{option: float(v)}) for v in RATE} == RATE


def test_p99_factor_is_at_least_one() -> None:
    cases = {0.0: False, 0.5: False, 1.0: True, 1.5: True, 99.5: True, 100.0: True, 100.5: False}
    assert {v: _accepted(p99_factor=v) for v in cases} == cases


def test_knee_concurrency_is_a_count_of_sequences() -> None:
    cases = {-1: False, 0: False, 1: True, 2: True, 99_999: True, 100_000: True, 100_001: False}
    assert {v: _accepted(knee_concurrency=v) for v in cases} == cases


def _marked(name: str) -> tuple[str, list[int]]:
    text = (FIXTURES / "INF009" / name).read_text("utf-8")
    lines = [n for n, x in enumerate(text.splitlines(), 1) if re.search(r"# expect: INF009", x)]
    return text, lines


@pytest.mark.parametrize(
    "first", ["pass_no_traffic.yaml", "pass_doc_example.yaml", "fail_latency_unreachable.yaml"]
)
def test_every_fleet_is_checked_after_the_first(first: str) -> None:
    head, head_lines = _marked(first)
    tail, tail_lines = _marked("fail_doc_example.yaml")
    tail = tail.replace("name: demo\n", "name: second\n", 1)  # document names are unique
    offset = head.count("\n") + 1  # the `---` line
    got = findings("INF009", head + "---\n" + tail)
    assert [f.line for f in got] == head_lines + [offset + n for n in tail_lines]
    assert len(tail_lines) == 1

"""TRN004 (multi-node training below 16 GPUs): the option that moves the threshold, and its range.

The threshold is 16 GPUs (the rule's name and doc: one 8-GPU NVLink node does the work of two
below it; nccl-tests issue 212, https://github.com/NVIDIA/nccl-tests/issues/212); the
fixtures in tests/rules/fixtures/TRN004 pin 15 (flagged) and 16 (not). `min_gpus` moves it.
"""

from __future__ import annotations

import pydantic
import pytest
from rulecase import FIXTURES

from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.spec import load_paths

# 2 nodes x 8 H100 = 16 GPUs
SIXTEEN = FIXTURES / "TRN004" / "pass_16_gpus_two_nodes.yaml"


def _findings(min_gpus: int) -> list[Finding]:
    rule = load_rules().get("TRN004")
    assert rule is not None
    options = {"TRN004": rule.options(min_gpus=min_gpus)}
    return list(lint(load_paths([SIXTEEN]), rules=[rule], options=options).findings)


def test_option_moves_the_threshold() -> None:
    (hit,) = _findings(17)
    assert (hit.line, hit.rule) == (7, "TRN004")  # compute.nodes
    assert hit.message.startswith("2 nodes with 16 GPUs in total; threshold: multi-node from 17")
    assert hit.hint.endswith("grow to at least 17 GPUs on a proper fabric")
    assert _findings(16) == []


def _accepted(value: int) -> bool:
    rule = load_rules().get("TRN004")
    assert rule is not None
    try:
        rule.options(min_gpus=value)
    except pydantic.ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        (-1, False),
        (0, False),
        (1, True),
        (2, True),
        (9_999_999, True),
        (10_000_000, True),
        (10_000_001, False),
    ],
)
def test_min_gpus_option_range(value: int, accepted: bool) -> None:
    # 0 could never flag anything (no cluster has fewer than 0 GPUs), so it is refused like
    # any other meaningless threshold; 1 is the smallest count. The ceiling is archform's cap
    # for GPU-count thresholds, 10,000,000 (also NET001 and NET002 min_gpus): a value past it
    # is a typo, refused at the config line instead of flagging every multi-node cluster.
    assert _accepted(value) is accepted

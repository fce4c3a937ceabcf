"""TRN003 (training on spot capacity): severity at the checkpoint threshold, messages, option.

The rule's doc: an error without frequent checkpoints, a warning when
`training.checkpoint_interval_minutes` is at most `checkpoint_interval_minutes` (default 15).
A synchronous job loses everything since its last checkpoint when one node is reclaimed
(Amazon EC2, Spot Instance interruptions,
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-interruptions.html), so the message
counts every GPU of the cluster: p5.48xlarge has 8 H100 GPUs
(https://aws.amazon.com/ec2/instance-types/p5/).
"""

from __future__ import annotations

import pydantic
import pytest
from rulecase import findings

from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.spec import load_text

SPOT = """\
version: 1
kind: TrainingCluster
name: spot
placement:
  provider: aws
  region: us-east-1
compute:
  nodes: 2
  instance_type: p5.48xlarge
  purchase: spot
  extra_groups:
    - name: steady
      nodes: 1
      instance_type: p5.48xlarge
      purchase: on_demand
    - name: burst
      nodes: 1
      instance_type: p5.48xlarge
      purchase: spot
    - name: late
      nodes: 1
      instance_type: p5.48xlarge
      purchase: spot
"""


def _with_interval(minutes: int | None) -> str:
    if minutes is None:
        return SPOT
    return SPOT + f"training:\n  checkpoint_interval_minutes: {minutes}\n"


@pytest.mark.parametrize(
    ("minutes", "severity"), [(1, "warning"), (15, "warning"), (16, "error"), (60, "error")]
)
def test_severity_at_the_15_minute_threshold(minutes: int, severity: str) -> None:
    got = findings("TRN003", _with_interval(minutes))
    # the primary group (compute.purchase) and the second and third extra groups (each at its
    # own `purchase:` line), not the on-demand one
    assert [(f.line, f.severity) for f in got] == [(10, severity), (19, severity), (23, severity)]


def test_message_counts_every_gpu_and_the_interval() -> None:
    primary, burst, late = findings("TRN003", _with_interval(60))
    # 5 nodes of p5.48xlarge, 8 H100 each
    # the primary group is named by its `name` field, "gpu" when not written
    assert primary.message == (
        "node group 'gpu' trains on spot capacity: one interruption stops all 40 GPUs and "
        "loses up to 60 minutes; checkpoint interval 60, threshold <= 15 min for a warning"
    )
    assert burst.message.startswith("node group 'burst' trains on spot capacity")
    assert late.message.startswith("node group 'late' trains on spot capacity")
    assert primary.hint == (
        "use on_demand, reserved or capacity_block; if spot is a must, checkpoint every "
        "15 minutes or less"
    )


def test_message_without_a_checkpoint_interval() -> None:
    primary, *_ = findings("TRN003", _with_interval(None))
    assert primary.severity == "error"
    assert primary.message.endswith(
        "stops all 40 GPUs and loses all work since the last checkpoint; checkpoint interval "
        "not set, threshold <= 15 min for a warning"
    )


def _lint(minutes: int, option: int) -> list[Finding]:
    rule = load_rules().get("TRN003")
    assert rule is not None
    options = {"TRN003": rule.options(checkpoint_interval_minutes=option)}
    return list(
        lint(load_text(_with_interval(minutes), "t.yaml"), rules=[rule], options=options).findings
    )


def test_option_moves_the_threshold() -> None:
    assert {f.severity for f in _lint(30, 30)} == {"warning"}
    assert {f.severity for f in _lint(31, 30)} == {"error"}
    first, *_ = _lint(31, 30)
    assert first.hint.endswith("checkpoint every 30 minutes or less")
    assert first.message.endswith("threshold <= 30 min for a warning")


def _accepted(value: int) -> bool:
    rule = load_rules().get("TRN003")
    assert rule is not None
    try:
        rule.options(checkpoint_interval_minutes=value)
    except pydantic.ValidationError:
        return False
    return True


def test_option_range_is_the_blueprint_field_range() -> None:
    # compared with training.checkpoint_interval_minutes, which the blueprint takes from 1 minute
    # to one week (7 x 24 x 60 = 10,080 minutes): the option has the same range
    got = {v: _accepted(v) for v in (-1, 0, 1, 2, 10_079, 10_080, 10_081)}
    assert got == {-1: False, 0: False, 1: True, 2: True, 10_079: True, 10_080: True, 10_081: False}

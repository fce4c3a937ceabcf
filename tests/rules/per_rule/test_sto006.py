"""STO006: the hint names the region the cluster is built in.

A training cluster is built in the first region it names (TrainingPlacement.primary_region:
"the region the cluster is built in (the first one named)"); `regions: [a, b]` is accepted so
TRN001 can report it, and the storage belongs beside the nodes, in the first one.
"""

from __future__ import annotations

from rulecase import findings

TWO_REGIONS = """version: 1
kind: TrainingCluster
name: two
placement: {provider: aws, regions: [us-east-1, us-west-2]}
compute: {nodes: 2, instance_type: p5.48xlarge}
storage:
  - name: ckpt
    kind: lustre
    purpose: checkpoints
    capacity_tib: 24
    region: eu-west-1
    mount: /fsx/ckpt
"""


def test_sto006_hint_names_the_primary_region() -> None:
    (finding,) = findings("STO006", TWO_REGIONS)
    assert finding.line == 11
    assert "in eu-west-1, the nodes in us-east-1, us-west-2" in finding.message
    assert finding.hint == "create 'ckpt' in us-east-1"

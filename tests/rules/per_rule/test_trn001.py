"""TRN001 (training across regions): the region the hints name.

A training cluster is built in the first region it names (TrainingPlacement.primary_region:
"the region the cluster is built in (the first one named)"), so both hints send the user
there: keep every node in it, and copy a far dataset into it. Three regions tell the first
from the second and the last.
"""

from __future__ import annotations

from rulecase import findings

THREE = """\
version: 1
kind: TrainingCluster
name: far
placement:
  provider: aws
  regions: [us-east-1, us-west-2, eu-west-1]
compute:
  nodes: 4
  instance_type: p5.48xlarge
storage:
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 24
    mount: /fsx/data
    region: ap-southeast-2
"""


def test_hints_name_the_first_region() -> None:
    spans, data = findings("TRN001", THREE)
    assert (spans.line, data.line) == (6, 16)
    assert spans.message.startswith(
        "training cluster spans 3 regions (us-east-1, us-west-2, eu-west-1); threshold: 1 region"
    )
    assert spans.hint.startswith("keep every node in one region (region: us-east-1) and run")
    assert data.message.startswith(
        "training data 'data' is in ap-southeast-2 but the nodes are in "
        "us-east-1, us-west-2, eu-west-1; threshold: same region"
    )
    assert data.hint == "copy the dataset into us-east-1 (or link a file system there to it)"


def test_training_data_in_any_node_region_is_not_flagged() -> None:
    # the data sits in the second of the node regions: only the span is a finding
    text = THREE.replace("region: ap-southeast-2", "region: us-west-2")
    (only,) = findings("TRN001", text)
    assert only.line == 6

"""INF004 (InfiniBand/EFA fabric for serving replicas that fit in one node): the boundary.

A replica of `tensor_parallel` GPUs fits in one node when tensor_parallel <= GPUs per node;
then its traffic stays on the node and the inter-node fabric carries nothing between replicas.
g6.12xlarge has 4 NVIDIA L4 GPUs (https://aws.amazon.com/ec2/instance-types/g6/), so
tensor_parallel 4 fills exactly one node and is flagged like 1 and 2 (the loader refuses a
replica larger than one node: archform generates single-node replicas).
"""

from __future__ import annotations

import pytest
from rulecase import findings

FLEET = """\
version: 1
kind: InferenceFleet
name: demo
placement: {{provider: aws, regions: [us-east-1, eu-west-2]}}
model: {{name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}}
server: {{image: "vllm/vllm-openai:v0.6.3", tensor_parallel: {tp}}}
gpu_pool:
  instance_type: {itype}
  fabric: efa
  min_nodes_per_region: 2
  max_nodes_per_region: 8
"""


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_replica_fitting_one_4_gpu_node_is_flagged(tp: int) -> None:
    got = findings("INF004", FLEET.format(tp=tp, itype="g6.12xlarge"))
    assert [(f.line, f.rule) for f in got] == [(9, "INF004")]
    assert got[0].message.startswith(f"efa fabric for replicas of {tp} GPU(s) ")
    assert "one 4-GPU node" in got[0].message


def test_unknown_gpu_count_is_not_flagged() -> None:
    # an instance type the catalog does not know and no `gpu:`: the GPUs per node are
    # unknown, so whether a replica fits in one node cannot be said
    assert findings("INF004", FLEET.format(tp=1, itype="custom-box")) == []

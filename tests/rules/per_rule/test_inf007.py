"""INF007 (spot GPU pool without an on-demand floor): the hint's floor.

The rule's message asks for "a floor of >= 1 on-demand node per region", and its hint offers
the pool's own minimum when that is larger (SkyServe's base_ondemand_fallback_replicas,
https://docs.skypilot.co/en/latest/serving/spot-policy.html, keeps that many on-demand
replicas under spot ones). A pool that may scale to zero still needs the one node.
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
server: {{image: "vllm/vllm-openai:v0.6.3"}}
gpu_pool:
  instance_type: g6.xlarge
  purchase: spot
  min_nodes_per_region: {low}
  max_nodes_per_region: 8
"""


@pytest.mark.parametrize(
    ("low", "floor"),
    [
        (0, 1),  # scale-to-zero pool: the message's minimum of one node
        (1, 1),
        (3, 3),  # the pool's own minimum is the larger
    ],
)
def test_hint_floor_is_the_pool_minimum_but_at_least_one(low: int, floor: int) -> None:
    (hit,) = findings("INF007", FLEET.format(low=low))
    assert hit.line == 9
    assert hit.hint == f"set on_demand_floor_per_region: {floor}"

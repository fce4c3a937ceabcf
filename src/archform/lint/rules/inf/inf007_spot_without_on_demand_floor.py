"""A spot GPU pool without an on-demand floor.

## What it does
Flags `gpu_pool.purchase: spot` with `on_demand_floor_per_region: 0`.

## Why is this bad?
Spot capacity has no SLA: a mass reclaim, which hits a whole instance family in a zone at
once, leaves zero replicas. A small on-demand floor per region keeps the service up while
spot capacity returns.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool:
  instance_type: g6.xlarge
  purchase: spot
  min_nodes_per_region: 2
  max_nodes_per_region: 8
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool:
  instance_type: g6.xlarge
  purchase: spot
  on_demand_floor_per_region: 2
  min_nodes_per_region: 2
  max_nodes_per_region: 8
```

## References
- SkyServe, spot replicas with `base_ondemand_fallback_replicas`:
  https://docs.skypilot.co/en/latest/serving/spot-policy.html
- Amazon EC2, Spot Instance interruptions (two-minute notice):
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-interruptions.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="INF007", name="spot-without-on-demand-floor", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Spot pool, floor 0."""
    for doc, fleet in ctx.fleets():
        pool = fleet.gpu_pool
        if pool.purchase == "spot" and pool.on_demand_floor_per_region == 0:
            yield Hit(
                doc,
                ("gpu_pool", "purchase"),
                "spot GPU pool with on_demand_floor_per_region 0: a mass reclaim leaves no "
                "replica; expected a floor of >= 1 on-demand node per region",
                f"set on_demand_floor_per_region: {max(1, pool.min_nodes_per_region)}",
            )

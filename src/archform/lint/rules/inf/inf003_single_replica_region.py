"""A serving region with fewer than two GPU nodes at minimum.

## What it does
Flags an InferenceFleet whose `gpu_pool.min_nodes_per_region` is below `min_nodes` (2).

## Why is this bad?
Losing one inference node is harmless only when another one is serving: with a
single node a drain, an upgrade or a spot reclaim is a full outage of that region.

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
  min_nodes_per_region: 1
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
  min_nodes_per_region: 2
  max_nodes_per_region: 8
```

## References
- Kubernetes, disruptions and PodDisruptionBudget:
  https://kubernetes.io/docs/concepts/workloads/pods/disruptions/
- Kubernetes, safely drain a node:
  https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule


class Inf003Options(Options):
    """Minimum GPU nodes per region."""

    min_nodes: Annotated[int, Field(ge=1, le=100_000)] = 2


@rule(code="INF003", name="single-replica-region", severity="error", options=Inf003Options)
def check(ctx: RuleContext, options: Inf003Options) -> Iterator[Hit]:
    """min_nodes_per_region below min_nodes."""
    for doc, fleet in ctx.fleets():
        pool = fleet.gpu_pool
        if pool.min_nodes_per_region < options.min_nodes:
            yield Hit(
                doc,
                ("gpu_pool", "min_nodes_per_region"),
                f"{pool.min_nodes_per_region} GPU node(s) per region at minimum; threshold: "
                f">= {options.min_nodes}, so one node failure or drain is not an outage",
                f"set min_nodes_per_region: {options.min_nodes}",
            )

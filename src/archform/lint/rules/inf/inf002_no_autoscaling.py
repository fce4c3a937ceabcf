"""An inference fleet that cannot scale.

## What it does
Flags an InferenceFleet without an `autoscaling` block, or whose
`gpu_pool.min_nodes_per_region` equals `max_nodes_per_region`.

## Why is this bad?
Serving traffic varies several-fold during a day: a fixed pool is sized either for the peak
(idle GPUs most of the day) or below it (queueing and timeouts at the peak).

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
  min_nodes_per_region: 4
  max_nodes_per_region: 4
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
  max_nodes_per_region: 16
autoscaling: {metric: queue_depth, target: 8}
```

## References
- Kubernetes, Horizontal Pod Autoscaling:
  https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
- Kubernetes, node autoscaling:
  https://kubernetes.io/docs/concepts/cluster-administration/node-autoscaling/
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="INF002", name="no-autoscaling", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Fixed-size pool or no autoscaling block."""
    for doc, fleet in ctx.fleets():
        pool = fleet.gpu_pool
        if pool.min_nodes_per_region == pool.max_nodes_per_region:
            yield Hit(
                doc,
                ("gpu_pool", "max_nodes_per_region"),
                f"GPU pool is fixed at {pool.max_nodes_per_region} nodes per region "
                "(min == max); expected room to scale with traffic",
                "raise max_nodes_per_region above min_nodes_per_region",
            )
        elif fleet.autoscaling is None:
            yield Hit(
                doc,
                ("autoscaling",),
                "fleet has no autoscaling block, so the pool never leaves "
                f"{pool.min_nodes_per_region} nodes per region; expected an autoscaler",
                "add autoscaling: {metric: queue_depth, target: 8}",
                at=("gpu_pool",),
            )

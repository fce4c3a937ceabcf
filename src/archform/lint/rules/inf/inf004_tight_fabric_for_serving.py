"""An InfiniBand or EFA fabric for a fleet whose replicas fit in one node.

## What it does
Flags an InferenceFleet with `gpu_pool.fabric: infiniband` or `efa` when a replica
(`server.tensor_parallel` GPUs) fits inside one node.

## Why is this bad?
Replicas of a serving fleet do not talk to each other; a replica inside one node uses
NVLink/PCIe. The tightly coupled fabric (and the placement constraints it brings) is paid
for and idle.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 1}
gpu_pool:
  instance_type: g6.12xlarge
  fabric: efa
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
server: {image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 1}
gpu_pool:
  instance_type: g6.12xlarge
  fabric: ethernet
  min_nodes_per_region: 2
  max_nodes_per_region: 8
```

## References
- vLLM, distributed inference and serving:
  https://docs.vllm.ai/en/latest/serving/distributed_serving.html
- Kubernetes, Horizontal Pod Autoscaling:
  https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="INF004", name="tight-fabric-for-serving", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """IB/EFA for single-node replicas."""
    for doc, fleet in ctx.fleets():
        pool = fleet.gpu_pool
        per_node = pool.gpu.per_node if pool.gpu else 0
        tp = fleet.server.tensor_parallel
        if pool.fabric in ("infiniband", "efa") and per_node and tp <= per_node:
            yield Hit(
                doc,
                ("gpu_pool", "fabric"),
                f"{pool.fabric} fabric for replicas of {tp} GPU(s) that fit in one "
                f"{per_node}-GPU node; replicas never talk to each other",
                "use fabric: ethernet for serving",
            )

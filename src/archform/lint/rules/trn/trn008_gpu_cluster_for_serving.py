"""A tightly coupled training cluster used for serving.

## What it does
Flags a TrainingCluster declared with `purpose: serving`.

## Why is this bad?
Serving is loosely coupled: replicas do not talk to each other, traffic varies 10x over a
day, and regions matter for users. A training cluster's fabric, placement group and
fixed size are paid for and not used.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
purpose: serving
placement: {provider: onprem, region: lab}
compute:
  nodes: 1
  gpu: {model: H100, per_node: 8}
fabric: {kind: ethernet, gbps_per_node: 100}
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
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
from archform.spec.models.training import TrainingCluster


@rule(code="TRN008", name="gpu-cluster-for-serving", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """purpose: serving on a TrainingCluster."""
    for doc, tc in ctx.documents(TrainingCluster):
        if tc.purpose == "serving":
            yield Hit(
                doc,
                ("purpose",),
                f"TrainingCluster {tc.name!r} ({tc.compute.total_gpus} GPUs) declared for "
                "serving; expected an InferenceFleet for serving",
                "describe the serving tier as an InferenceFleet (autoscaled, multi-region)",
            )

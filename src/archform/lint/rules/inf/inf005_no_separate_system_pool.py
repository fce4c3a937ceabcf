"""No separate CPU node pool for system workloads.

## What it does
Flags an InferenceFleet without a `system_pool`.

## Why is this bad?
Without a CPU pool, ingress controllers, monitoring and other CPU pods are scheduled onto
the GPU nodes: they take CPU and memory from the model server and keep GPU nodes from
scaling down. GKE and AKS taint GPU and user pools for this reason; the taint keeps only
pods that tolerate it off the GPU nodes, so the cluster still needs a pool for the rest.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
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
system_pool: {instance_type: m6i.xlarge, nodes_per_region: 2}
```

## References
- AKS, system and user node pools: https://learn.microsoft.com/azure/aks/use-system-pools
- Kubernetes, taints and tolerations:
  https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- GKE, GPU node pools are tainted `nvidia.com/gpu=present:NoSchedule`:
  https://cloud.google.com/kubernetes-engine/docs/how-to/gpus
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="INF005", name="no-separate-system-pool", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """No system_pool."""
    for doc, fleet in ctx.fleets():
        if fleet.system_pool is None:
            yield Hit(
                doc,
                ("system_pool",),
                "no system_pool: CPU pods (ingress, monitoring, DNS) land on GPU nodes, take "
                "CPU and memory from the model server and keep GPU nodes from scaling down; "
                "expected a separate CPU pool",
                "add system_pool: {instance_type: <cpu type>, nodes_per_region: 2}",
                at=("gpu_pool",),
            )

"""The Kubernetes API server is reachable from the whole internet.

## What it does
Flags `kubernetes.api_access_cidrs` entries `0.0.0.0/0` or `::/0` on an InferenceFleet.

## Why is this bad?
A public control plane is one leaked kubeconfig or one API-server CVE away from the whole
fleet, GPUs and model weights included. Private endpoints or allow-listed ranges cost
nothing.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-1]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
kubernetes:
  api_access_cidrs: [0.0.0.0/0]
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-1]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
kubernetes:
  api_access_cidrs: [10.0.0.0/8]
```

## References
- Amazon EKS, cluster API server endpoint access:
  https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html
- GKE, private clusters:
  https://cloud.google.com/kubernetes-engine/docs/concepts/private-cluster-concept
- AKS, private clusters: https://learn.microsoft.com/azure/aks/private-clusters
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule

WORLD = frozenset({"0.0.0.0/0", "::/0"})


@rule(code="SEC002", name="public-kubernetes-api", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """World CIDR on the API server."""
    for doc, fleet in ctx.fleets():
        for i, cidr in enumerate(fleet.kubernetes.api_access_cidrs):
            if cidr in WORLD:
                yield Hit(
                    doc,
                    ("kubernetes", "api_access_cidrs", i),
                    f"Kubernetes API open to {cidr}; expected private or allow-listed ranges",
                    "list the CI and operator ranges instead, e.g. 10.0.0.0/8",
                )

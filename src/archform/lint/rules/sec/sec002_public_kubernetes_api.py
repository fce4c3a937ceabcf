"""The Kubernetes API server is reachable from the whole internet.

## What it does
Flags `kubernetes.api_access_cidrs` of an InferenceFleet when its ranges together admit more
than a small share of the public IPv4 internet (default 0.1%, about a /10). The share is
computed by address arithmetic: overlapping ranges count once, and private, reserved and
documentation blocks (the IANA special-purpose registry) do not count. So `0.0.0.0/0` and
`[0.0.0.0/1, 128.0.0.0/1]` fire; `10.0.0.0/8` or a `/24` of your office does not. The
finding points at the entry that admits the most and names the covered share. Option:
`max_public_percent`. (IPv6 ranges are rejected by validation: EKS, GKE and AKS clusters as
archform creates them are IPv4 clusters.)

## Why is this bad?
A public control plane is one leaked kubeconfig or one API-server CVE away from the whole
fleet, GPUs and model weights included. Private endpoints or allow-listed ranges cost
nothing.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
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
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
kubernetes:
  api_access_cidrs: [10.0.0.0/8]
```

## References
- GKE, private clusters:
  https://cloud.google.com/kubernetes-engine/docs/concepts/private-cluster-concept
- AKS, private clusters: https://learn.microsoft.com/azure/aks/private-clusters
- Amazon EKS, cluster API server endpoint (restricting public access by CIDR):
  https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html
- GKE, authorized networks for control plane access:
  https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks
- IANA IPv4 Special-Purpose Address Registry:
  https://www.iana.org/assignments/iana-ipv4-special-registry/iana-ipv4-special-registry.xhtml
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.exposure import open_ranges
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule


class Sec002Options(Options):
    """Largest share of the public address space the API server may admit, in percent."""

    max_public_percent: float = Field(default=0.1, ge=0, le=100, allow_inf_nan=False)


@rule(code="SEC002", name="public-kubernetes-api", severity="warning", options=Sec002Options)
def check(ctx: RuleContext, options: Sec002Options) -> Iterator[Hit]:
    """api_access_cidrs that together admit more than max_public_percent of the internet."""
    for doc, fleet in ctx.fleets():
        cidrs = fleet.kubernetes.api_access_cidrs
        for found in open_ranges(cidrs, options.max_public_percent):
            yield Hit(
                doc,
                ("kubernetes", "api_access_cidrs", found.index),
                f"Kubernetes API open to {found.describe(options.max_public_percent)}; "
                "expected private or allow-listed ranges",
                "list the CI and operator ranges instead, e.g. 10.0.0.0/8",
            )

"""A user-facing inference fleet in a single region.

## What it does
Flags an InferenceFleet that serves from one region only.

## Why is this bad?
A regional outage takes the whole service down, and users on other continents pay the
round trip on every token. Geographic distribution (lower latency for users in Asia, the EU and
the US) is one of the things a serving tier is for. If one region is a requirement (data
residency), suppress this rule in `lint.ignore` with that reason.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1]}
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
```

## References
- Kubernetes, running in multiple zones:
  https://kubernetes.io/docs/setup/best-practices/multiple-zones/
- AWS Well-Architected Reliability Pillar, deploy the workload to multiple locations:
  https://docs.aws.amazon.com/wellarchitected/latest/reliability-pillar/rel_fault_isolation_multiaz_region_system.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="INF001", name="single-region-serving", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """One serving region."""
    for doc, fleet in ctx.fleets():
        regions = fleet.placement.all_regions
        if len(regions) == 1:
            yield Hit(
                doc,
                ctx.first_written(doc, ("placement", "regions"), ("placement", "region")),
                f"fleet serves from 1 region ({regions[0]}); threshold: >= 2 regions for a "
                "user-facing service",
                "add a second region (and a global load balancer), or suppress with the "
                "reason (e.g. data residency)",
            )

"""Multi-node cloud training without a cluster placement.

## What it does
Flags a multi-node TrainingCluster in a cloud (aws, gcp, azure) whose
`placement.colocation` is not `cluster`.

## Why is this bad?
Only a cluster placement group (AWS), a COLLOCATED compact placement policy (GCP) or a
single scale set with one placement group (Azure) puts the nodes under the same
low-latency network spine; Azure only wires InfiniBand between VMs of one scale set.
AWS ParallelCluster rejects EFA queues without a placement group
(EfaPlacementGroupValidator).

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
  colocation: spread
compute:
  nodes: 4
  instance_type: p5.48xlarge
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
  colocation: cluster
compute:
  nodes: 4
  instance_type: p5.48xlarge
```

## References
- Amazon EC2, cluster placement groups:
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-groups.html
- Google Compute Engine, compact placement policies:
  https://cloud.google.com/compute/docs/instances/use-compact-placement-policies
- Azure, scale sets and placement groups:
  https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-placement-groups
- AWS ParallelCluster EfaPlacementGroupValidator:
  https://github.com/aws/aws-parallelcluster/blob/develop/cli/src/pcluster/validators/cluster_validators.py
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule

MECHANISM = {
    "aws": "a cluster placement group",
    "gcp": "a COLLOCATED compact placement policy",
    "azure": "one VM scale set with singlePlacementGroup",
}


@rule(code="NET004", name="missing-placement", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Cloud, several nodes, colocation not `cluster`."""
    for doc, tc in ctx.training():
        provider = tc.placement.provider
        if provider == "onprem" or tc.compute.total_nodes <= 1:
            continue
        if tc.placement.colocation != "cluster":
            yield Hit(
                doc,
                ("placement", "colocation"),
                f"{tc.compute.total_nodes} {provider} nodes with colocation "
                f"{tc.placement.colocation!r}; expected 'cluster' ({MECHANISM[provider]})",
                "set placement.colocation: cluster",
            )

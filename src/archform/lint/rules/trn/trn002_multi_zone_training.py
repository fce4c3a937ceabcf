"""Training nodes span more than one availability zone.

## What it does
Flags a TrainingCluster whose `placement.zones` names more than one zone.

## Why is this bad?
Zones are separate buildings joined by metro links: the RDMA fabrics (EFA, InfiniBand,
RDMA VPCs) do not cross them, and the step time is set by the slowest link. AWS
ParallelCluster refuses EFA queues that span zones (EfaMultiAzValidator).

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
  zones: [us-east-1a, us-east-1b]
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
  zones: [us-east-1a]
compute:
  nodes: 4
  instance_type: p5.48xlarge
```

## References
- AWS ParallelCluster EfaMultiAzValidator:
  https://github.com/aws/aws-parallelcluster/blob/develop/cli/src/pcluster/validators/cluster_validators.py
- Amazon EC2, cluster placement groups (one Availability Zone):
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-groups.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="TRN002", name="multi-zone-training", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """More than one zone for one training cluster."""
    for doc, tc in ctx.training():
        zones = list(dict.fromkeys(tc.placement.zones))
        if len(zones) > 1:
            yield Hit(
                doc,
                ("placement", "zones"),
                f"training nodes span {len(zones)} zones ({', '.join(zones)}); threshold: 1 "
                "zone (RDMA fabrics and cluster placement groups stop at a zone's edge, and "
                "every step waits for the slowest, cross-zone link)",
                f"place every node in one zone, e.g. zones: [{zones[0]}]",
            )

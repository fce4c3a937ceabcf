"""Multi-node cloud training without a cluster placement.

## What it does
Flags a multi-node TrainingCluster in a cloud (aws, gcp, azure) whose
`placement.colocation` is not `cluster`.

On AWS a node group that launches into a named reservation (`purchase: capacity_block`, or
`purchase: reserved` with a `capacity_reservation_id`) is already placed by it: a Capacity
Block is co-located by itself and a targeted On-Demand Capacity Reservation carries the
placement group it was created in. A cluster placement group on top of one causes
insufficient-capacity launch failures, so archform never creates one for such a group and
this rule stays silent when every group of the cluster is reserved that way.

## Why is this bad?
Only a cluster placement group (AWS), a COLLOCATED compact placement policy (GCP) or a
single scale set with one placement group (Azure) puts the nodes under the same
low-latency network spine; Azure only wires InfiniBand between VMs of one scale set.
AWS ParallelCluster rejects EFA queues without a placement group
(EfaPlacementGroupValidator).

A reservation-placed cluster written as AWS's own p5 reference does it (placement group off,
targeted reservation on) is not flagged:

```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
  colocation: none
compute:
  nodes: 4
  instance_type: p5.48xlarge
  purchase: reserved
  capacity_reservation_id: cr-0123456789abcdef0
```

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
- AWS ParallelCluster EfaPlacementGroupValidator and PlacementGroupCapacityTypeValidator:
  https://github.com/aws/aws-parallelcluster/blob/develop/cli/src/pcluster/validators/cluster_validators.py
- AWS's p5 ParallelCluster configs ("set this to false if using a targeted ODCR"):
  https://github.com/aws-samples/awsome-distributed-training/tree/main/1.architectures/2.aws-parallelcluster
- Amazon EC2, Capacity Reservations in cluster placement groups:
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-cpg.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.provider import spec_of


@rule(code="NET004", name="missing-placement", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Cloud, several nodes, colocation not `cluster` (outside a reservation that places)."""
    for doc, tc in ctx.training():
        provider = tc.placement.provider
        spec = spec_of(provider)
        mechanism = spec.placement_mechanism
        if mechanism is None or tc.compute.total_nodes <= 1:
            continue
        if tc.placement.colocation == "cluster":
            continue
        groups = tc.compute.groups
        reserved = [g for g in groups if spec.reservation_places and g.targets_reservation]
        if len(reserved) == len(groups):
            continue  # every node is placed by its Capacity Block or targeted reservation
        unplaced = sum(g.nodes for g in groups if g not in reserved)
        hint = "set placement.colocation: cluster"
        if reserved:
            names = ", ".join(g.name for g in reserved)
            hint += (
                f" (the reserved group(s) {names} stay out of the placement group: "
                "their reservation places them)"
            )
        yield Hit(
            doc,
            ("placement", "colocation"),
            f"{unplaced} {provider} nodes outside a reservation with colocation "
            f"{tc.placement.colocation!r}; expected 'cluster' ({mechanism})"
            if reserved
            else f"{tc.compute.total_nodes} {provider} nodes with colocation "
            f"{tc.placement.colocation!r}; expected 'cluster' ({mechanism})",
            hint,
        )

"""Training nodes span more than one availability zone.

## What it does
Flags a TrainingCluster whose `placement.zones` names more than one zone, and states what
`archform estimate`'s step model gives for the blueprint's workload (or, when it declares no
`training.model_params`, an assumed Llama 3.1 70B FSDP run, said so in the message) with its
data-parallel collectives crossing the zone boundary over TCP at `cross_zone_gbps_per_node`
(80) against the same cluster in one zone: tokens/s per GPU, step time, exposed sync.

The 80 Gbps default is derived for AWS and used elsewhere as an assumption: RDMA (EFA) does
not leave a zone, so NCCL falls back to its socket transport, which opens 2 threads x 8
sockets per connection on AWS network devices (NVIDIA/nccl `src/transport/net_socket.cc`),
and EC2 limits each flow to 5 Gbps between instances outside one cluster placement group,
which cannot span zones: 16 x 5 Gbps, one connection per node across the boundary. A ring
all-reduce runs at its slowest link's rate.

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
- Amazon EC2 instance network bandwidth (single-flow limit 5 Gbps outside a cluster placement
  group): https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-network-bandwidth.html
- NCCL socket transport, sockets per connection on AWS:
  https://github.com/NVIDIA/nccl/blob/master/src/transport/net_socket.cc
- AWS ParallelCluster EfaMultiAzValidator:
  https://github.com/aws/aws-parallelcluster/blob/develop/cli/src/pcluster/validators/cluster_validators.py
- Amazon EC2, cluster placement groups (one Availability Zone):
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-groups.html
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule

if TYPE_CHECKING:
    from archform.spec.models.training import TrainingCluster


class Trn002Options(Options):
    """The bandwidth the data-parallel collectives get across the zone boundary."""

    cross_zone_gbps_per_node: Annotated[int, Field(ge=1, le=100_000)] = 80


def cross_zone_text(tc: TrainingCluster, gbps: int) -> str:
    """The step model across zones vs in one zone, or ''."""
    from archform.estimate.training_plan import fabric_what_if
    from archform.lint.training_numbers import compare

    cross = min(gbps, tc.fabric.gbps_per_node)
    w = fabric_what_if(tc, cross, "ethernet")
    if w is None:
        return ""
    text = "; archform estimate's step model gives " + compare(
        w.there,
        w.here,
        f"with the data-parallel collectives across zones over TCP at {cross} Gbps per node",
        f"in one zone on the {tc.fabric.gbps_per_node} Gbps {tc.fabric.kind} fabric",
    )
    return text + (f" [{w.assumed}]" if w.assumed else "")


@rule(code="TRN002", name="multi-zone-training", severity="error", options=Trn002Options)
def check(ctx: RuleContext, options: Trn002Options) -> Iterator[Hit]:
    """More than one zone for one training cluster."""
    for doc, tc in ctx.training():
        zones = list(dict.fromkeys(tc.placement.zones))
        if len(zones) > 1:
            yield Hit(
                doc,
                ("placement", "zones"),
                f"training nodes span {len(zones)} zones ({', '.join(zones)}); threshold: 1 "
                "zone (RDMA fabrics and cluster placement groups stop at a zone's edge, and "
                "every step waits for the slowest, cross-zone link)"
                + cross_zone_text(tc, options.cross_zone_gbps_per_node),
                f"place every node in one zone, e.g. zones: [{zones[0]}]",
            )

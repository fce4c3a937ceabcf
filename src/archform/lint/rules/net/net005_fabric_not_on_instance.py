"""The declared fabric does not match the instance type.

## What it does
Compares the declared `fabric` (TrainingCluster) or `gpu_pool.fabric` (InferenceFleet)
with the instance type's fabric in archform's catalog. It is an error when the instance
lacks the declared fabric kind or bandwidth, and a warning when a training instance has
an RDMA fabric (EFA, InfiniBand, RoCE) that the blueprint leaves unused (`ethernet`).

## Why is this bad?
A fabric the instance does not have is never configured: NCCL silently falls back to TCP
sockets. An RDMA fabric left unused is paid for in the instance price. AWS ParallelCluster
checks the same (EfaValidator).

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
compute:
  nodes: 4
  instance_type: p5.48xlarge
fabric:
  kind: infiniband
  gbps_per_node: 3200
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
compute:
  nodes: 4
  instance_type: p5.48xlarge
fabric:
  kind: efa
  gbps_per_node: 3200
```

## References
- Amazon EC2, EFA supported instance types:
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html
- AWS ParallelCluster EfaValidator:
  https://github.com/aws/aws-parallelcluster/blob/develop/cli/src/pcluster/validators/cluster_validators.py
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


@rule(code="NET005", name="fabric-not-on-instance", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Declared fabric vs the catalog's instance fabric."""
    for doc, tc in ctx.documents(TrainingCluster):
        fabric = tc.fabric
        for i, group in enumerate(tc.compute.groups):
            # `fabric:` filled from the primary type is not in the file: point at the type
            # of the group that lacks it, not at the document's first line.
            group_loc = ("compute",) if i == 0 else ("compute", "extra_groups", i - 1)
            at = (*group_loc, "instance_type")
            info = ctx.catalog.instance(group.instance_type) if group.instance_type else None
            if info is None or group.gpu is None:
                continue  # the fabric joins GPUs; a CPU group (a debug partition) has none
            have = info.fabric_kind
            have_gbps = info.fabric_gbps if have != "ethernet" else int(info.ethernet_gbps)
            value = [fabric.kind, fabric.gbps_per_node, info.name]
            if fabric.kind == have:
                if fabric.gbps_per_node > have_gbps:
                    yield Hit(
                        doc,
                        ("fabric", "gbps_per_node"),
                        f"fabric declares {fabric.gbps_per_node} Gbps per node but "
                        f"{info.name} has {have_gbps} Gbps of {have}",
                        f"set gbps_per_node: {have_gbps} or choose a larger instance type",
                        value=value,
                        at=at,
                    )
            elif fabric.kind == "ethernet" and have != "ethernet":
                if tc.compute.total_nodes > 1:
                    yield Hit(
                        doc,
                        ("fabric", "kind"),
                        f"{info.name} has {have} at {have_gbps} Gbps per node but the blueprint "
                        "uses plain ethernet; the RDMA fabric is paid for and idle",
                        f"remove `fabric:` to take {have} from the catalog",
                        severity="warning",
                        value=value,
                        at=at,
                    )
            else:
                yield Hit(
                    doc,
                    ("fabric", "kind"),
                    f"{info.name} has no {fabric.kind} fabric (it has {have} at {have_gbps} "
                    "Gbps per node)",
                    f"use kind: {have}, or remove `fabric:` to take it from the catalog",
                    value=value,
                    at=at,
                )
    for doc, fleet in ctx.fleets():
        pool = fleet.gpu_pool
        info = ctx.catalog.instance(pool.instance_type)
        if info is None or pool.fabric == "ethernet" or pool.fabric == info.fabric_kind:
            continue
        yield Hit(
            doc,
            ("gpu_pool", "fabric"),
            f"{info.name} has no {pool.fabric} fabric (it has {info.fabric_kind})",
            "use fabric: ethernet for serving, or an instance type with that fabric",
        )

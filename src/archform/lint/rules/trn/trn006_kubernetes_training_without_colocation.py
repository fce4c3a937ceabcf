"""Multi-node training on Kubernetes without a co-location guarantee.

## What it does
Flags a multi-node training cluster with `scheduler.kind: kubernetes` whose
`placement.colocation` is not `cluster` (no placement group / compact policy).

## Why is this bad?
The Kubernetes scheduler places pods wherever a GPU is free: different racks, different
spines, nodes whose network is shared with logs and health checks. Scheduling GPUs
is not the same as building a GPU cluster: NCCL traffic then crosses spines the job does
not control, and collective timeouts follow.

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
scheduler:
  kind: kubernetes
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
scheduler:
  kind: kubernetes
```

## References
- Kueue, topology aware scheduling:
  https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/
- GKE, compact placement:
  https://cloud.google.com/kubernetes-engine/docs/how-to/compact-placement
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="TRN006", name="kubernetes-training-without-colocation", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Kubernetes, more than one node, colocation not `cluster`."""
    for doc, tc in ctx.training():
        if (
            tc.scheduler.kind == "kubernetes"
            and tc.compute.total_nodes > 1
            and tc.placement.colocation != "cluster"
        ):
            yield Hit(
                doc,
                ("scheduler", "kind"),
                f"{tc.compute.total_nodes}-node training on Kubernetes with colocation "
                f"{tc.placement.colocation!r}; expected colocation 'cluster' so pods share "
                "one placement group and fabric",
                "set placement.colocation: cluster, or use scheduler.kind: slurm",
                at=("scheduler",),
            )

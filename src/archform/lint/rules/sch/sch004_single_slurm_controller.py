"""A large Slurm cluster with a single controller.

## What it does
Flags a Slurm TrainingCluster with more than `max_nodes` (64) nodes and
`scheduler.backup_controller: false`.

## Why is this bad?
slurmctld is a single point of failure: while it is down no job starts, and running jobs
cannot be managed. At this size a host failure or an upgrade takes the whole cluster's
scheduling with it; a backup controller on shared state takes over.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 128
  gpu: {model: H100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 3200}
scheduler:
  kind: slurm
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 128
  gpu: {model: H100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 3200}
scheduler:
  kind: slurm
  backup_controller: true
```

## References
- slurm.conf(5), SlurmctldHost (a second line adds a backup controller):
  https://slurm.schedmd.com/slurm.conf.html#OPT_SlurmctldHost
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule
from archform.spec.models.training import TrainingCluster


class Sch004Options(Options):
    """Node count above which a backup controller is expected."""

    max_nodes: Annotated[int, Field(ge=1, le=100_000)] = 64


@rule(code="SCH004", name="single-slurm-controller", severity="warning", options=Sch004Options)
def check(ctx: RuleContext, options: Sch004Options) -> Iterator[Hit]:
    """More than max_nodes nodes and no backup controller."""
    for doc, tc in ctx.documents(TrainingCluster):
        sched = tc.scheduler
        nodes = tc.compute.total_nodes
        if sched.kind == "slurm" and nodes > options.max_nodes and not sched.backup_controller:
            yield Hit(
                doc,
                ("scheduler", "backup_controller"),
                f"{nodes} nodes depend on one slurmctld; threshold: a backup controller above "
                f"{options.max_nodes} nodes",
                "set scheduler.backup_controller: true",
                at=ctx.first_written(doc, ("scheduler",), ("compute", "nodes")),
            )

"""Training on spot (preemptible) capacity.

## What it does
Flags node groups of a training cluster bought as `purchase: spot`. It is an error
without frequent checkpoints and a warning when `training.checkpoint_interval_minutes` is
at most `checkpoint_interval_minutes` (default 15).

## Why is this bad?
A synchronous job stops when any node is reclaimed; everything since the last checkpoint
is lost, then the job waits for replacement capacity. One
interruption can cost hours of work. Spot capacity for large GPU counts is also the first to vanish.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
compute:
  nodes: 2
  instance_type: p5.48xlarge
  purchase: spot
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
  nodes: 2
  instance_type: p5.48xlarge
  purchase: capacity_block
```

## References
- Amazon EC2, Spot Instance interruptions:
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-interruptions.html
- Google Compute Engine, Spot VMs (30-second preemption notice):
  https://cloud.google.com/compute/docs/instances/spot
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule
from archform.spec.paths import Loc


class Trn003Options(Options):
    """Checkpoint interval (minutes) at or below which spot is only a warning."""

    checkpoint_interval_minutes: Annotated[int, Field(ge=1, le=10_080)] = 15


@rule(code="TRN003", name="spot-training", severity="error", options=Trn003Options)
def check(ctx: RuleContext, options: Trn003Options) -> Iterator[Hit]:
    """Spot capacity for a training cluster."""
    for doc, tc in ctx.training():
        interval = tc.training.checkpoint_interval_minutes if tc.training else None
        frequent = interval is not None and interval <= options.checkpoint_interval_minutes
        for i, group in enumerate(tc.compute.groups):
            if group.purchase != "spot":
                continue
            loc: Loc = (
                ("compute", "purchase")
                if i == 0
                else ("compute", "extra_groups", i - 1, "purchase")
            )
            lost = f"up to {interval} minutes" if interval else "all work since the last checkpoint"
            yield Hit(
                doc,
                loc,
                f"node group {group.name!r} trains on spot capacity: one interruption stops "
                f"all {tc.compute.total_gpus} GPUs and loses {lost}; checkpoint interval "
                f"{interval if interval is not None else 'not set'}, threshold "
                f"<= {options.checkpoint_interval_minutes} min for a warning",
                "use on_demand, reserved or capacity_block; if spot is a must, checkpoint "
                f"every {options.checkpoint_interval_minutes} minutes or less",
                severity="warning" if frequent else None,
            )

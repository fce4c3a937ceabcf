"""GRES AutoDetect requested for dynamic (cloud) nodes.

## What it does
Flags `scheduler.gres_autodetect` other than `off` when `scheduler.elastic` is true (nodes
are Slurm CLOUD nodes, powered up on demand).

## Why is this bad?
gres.conf(5): AutoDetect runs in slurmd on the node, but slurmctld must know a CLOUD
node's GRES before the node exists to schedule onto it; jobs asking for GPUs then pend or
nodes register with mismatched GRES and are drained. Declare `Gres=gpu:<type>:<n>`
explicitly for cloud nodes: with `gres_autodetect: "off"` archform writes gres.conf with the
device files and, where its catalog has the vendor's GPU-to-CPU affinity for the instance type
(NCCL topology files of AWS and Azure), the GPU-local `Cores=` that AutoDetect would have found.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute:
  nodes: 2
  instance_type: p5.48xlarge
scheduler:
  elastic: true
  gres_autodetect: nvml
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute:
  nodes: 2
  instance_type: p5.48xlarge
scheduler:
  elastic: true
  gres_autodetect: "off"
```

## References
- gres.conf(5), AutoDetect cannot be used with cloud nodes:
  https://slurm.schedmd.com/gres.conf.html#OPT_AutoDetect
- gres.conf(5), Cores (logical core indices): https://slurm.schedmd.com/gres.conf.html#OPT_Cores
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


@rule(code="SCH002", name="gres-autodetect-on-cloud-nodes", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """AutoDetect with elastic (CLOUD) nodes."""
    for doc, tc in ctx.documents(TrainingCluster):
        sched = tc.scheduler
        if sched.kind == "slurm" and sched.elastic and sched.gres_autodetect != "off":
            yield Hit(
                doc,
                ("scheduler", "gres_autodetect"),
                f"gres AutoDetect={sched.gres_autodetect} on elastic (CLOUD) nodes; expected "
                "off, with GPUs declared in slurm.conf",
                'set gres_autodetect: "off"; archform then writes Gres=gpu:<type>:<n> per node and '
                "gres.conf File= (with Cores= where the catalog knows the GPU affinity)",
            )

"""A GPU cluster without node health checks.

## What it does
Flags a TrainingCluster with GPUs whose `scheduler.health_checks` is written empty. A Slurm
cluster with GPUs that does not write the field gets `[nhc, dcgm]` by default (shown in the
resolved blueprint), so this fires only when the checks were turned off.

## Why is this bad?
A GPU with an uncorrectable ECC error, a fallen-off NVLink or a downed HCA keeps
accepting jobs and hangs or slows every job it joins. NHC in the Slurm HealthCheckProgram
and DCGM diagnostics drain such nodes before jobs land on them.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 1
  gpu: {model: H100, per_node: 8}
fabric: {kind: ethernet, gbps_per_node: 100}
scheduler:
  kind: slurm
  health_checks: []
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 1
  gpu: {model: H100, per_node: 8}
fabric: {kind: ethernet, gbps_per_node: 100}
scheduler:
  kind: slurm
  health_checks: [nhc, dcgm]
```

## References
- slurm.conf(5), HealthCheckProgram:
  https://slurm.schedmd.com/slurm.conf.html#OPT_HealthCheckProgram
- LBNL Node Health Check: https://github.com/mej/nhc
- NVIDIA DCGM diagnostics:
  https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


@rule(code="SCH003", name="no-node-health-checks", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """GPUs and no health checks."""
    for doc, tc in ctx.documents(TrainingCluster):
        if tc.compute.total_gpus > 0 and not tc.scheduler.health_checks:
            yield Hit(
                doc,
                ("scheduler", "health_checks"),
                f"{tc.compute.total_gpus} GPUs and no node health checks; expected at least "
                "one of nhc, dcgm",
                "set scheduler.health_checks: [nhc, dcgm]",
                at=ctx.first_written(
                    doc, ("scheduler", "health_checks"), ("scheduler",), ("compute",)
                ),
            )

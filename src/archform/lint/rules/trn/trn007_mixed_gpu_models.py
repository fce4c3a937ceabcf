"""GPU models differ inside one training cluster.

## What it does
Flags a TrainingCluster whose node groups (`compute` and `compute.extra_groups`) have
different GPU models.

## Why is this bad?
A data-parallel job runs in lock step: one NCCL ring runs at the speed of its slowest GPU
and link, so the faster GPUs idle. Mixed generations also need different drivers, NCCL
tunings and memory budgets.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 4
  gpu: {model: H100, per_node: 8}
  extra_groups:
    - name: old
      nodes: 4
      gpu: {model: A100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 1600}
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 8
  gpu: {model: H100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 3200}
```

## References
- Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication Operations in
  MPICH", IJHPCA 19(1), 2005 (ring allreduce cost model)
- NCCL environment variables: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="TRN007", name="mixed-gpu-models", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Node groups with different GPU models."""
    for doc, tc in ctx.training():
        primary = tc.compute.gpu.model if tc.compute.gpu else None
        for i, group in enumerate(tc.compute.extra_groups):
            if group.gpu is None or primary is None or group.gpu.model == primary:
                continue
            base = ("compute", "extra_groups", i)
            yield Hit(
                doc,
                ctx.first_written(doc, (*base, "gpu", "model"), (*base, "instance_type")),
                f"node group {group.name!r} has {group.gpu.model} GPUs, the primary group "
                f"{primary}; threshold: one GPU model per training cluster",
                "split the groups into separate clusters, one per GPU model",
                at=base,
            )

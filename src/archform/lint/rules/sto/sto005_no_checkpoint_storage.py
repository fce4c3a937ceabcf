"""A multi-node training cluster without checkpoint storage.

## What it does
Flags a training cluster with more than one node and no storage entry with
`purpose: checkpoints`.

## Why is this bad?
With many nodes, some node fails during a long run; without a shared place for
checkpoints the job restarts from zero. The more GPUs, the shorter the mean time between
failures.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 4
  gpu: {model: H100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 3200}
storage:
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 100
    mount: /lustre/data
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 4
  gpu: {model: H100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 3200}
storage:
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 100
    mount: /lustre/data
  - name: ckpt
    kind: lustre
    purpose: checkpoints
    capacity_tib: 50
    mount: /lustre/ckpt
```

## References
- Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783 s3.3.4 (419 unexpected
  interruptions in a 54-day pre-training run)
- PyTorch, distributed checkpoint: https://pytorch.org/docs/stable/distributed.checkpoint.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="STO005", name="no-checkpoint-storage", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """No purpose: checkpoints on a multi-node cluster."""
    for doc, tc in ctx.training():
        if tc.compute.total_nodes <= 1:
            continue
        if not any(s.purpose == "checkpoints" for s in tc.storage):
            yield Hit(
                doc,
                ("storage",),
                f"{tc.compute.total_nodes}-node training cluster has no storage with "
                "purpose: checkpoints; a node failure then loses the whole run",
                "add a persistent shared file system with purpose: checkpoints",
                at=("compute",),
            )

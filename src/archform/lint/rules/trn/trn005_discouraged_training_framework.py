"""Training with Horovod or a home-grown MPI framework.

## What it does
Flags `training.framework: horovod` or `custom_mpi`.

## Why is this bad?
PyTorch FSDP, DeepSpeed, Megatron/NeMo and JAX are where sharded optimizers, overlap of
communication with compute, and NCCL tuning are maintained. Horovod has been in
maintenance mode, and home-grown MPI training loops re-implement (and usually miss)
bucketing, overlap and sharding.

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
training:
  framework: horovod
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
training:
  framework: pytorch_fsdp
```

## References
- Zhao et al., "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel",
  arXiv:2304.11277
- PyTorch, FullyShardedDataParallel: https://pytorch.org/docs/stable/fsdp.html
- NVIDIA NeMo Framework: https://docs.nvidia.com/nemo-framework/user-guide/latest/overview.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule

DISCOURAGED = {"horovod": "Horovod", "custom_mpi": "a home-grown MPI training loop"}


@rule(code="TRN005", name="discouraged-training-framework", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Horovod or custom MPI."""
    for doc, tc in ctx.training():
        if tc.training and tc.training.framework in DISCOURAGED:
            yield Hit(
                doc,
                ("training", "framework"),
                f"framework {tc.training.framework} ({DISCOURAGED[tc.training.framework]}); "
                "expected one of pytorch_fsdp, deepspeed, megatron, nemo, jax",
                "port the training loop to PyTorch FSDP or NeMo",
            )

"""Fabric bandwidth per GPU is below what H100-class training needs.

## What it does
Flags a multi-node training cluster with at least `min_gpus` (16) GPUs whose fabric gives
less than `min_gbps_per_gpu` (100) Gbps per GPU (`gbps_per_node / gpus per node`).

## Why is this bad?
H100-class nodes ship one 400 Gbps NIC per GPU (3,200 Gbps per node) because data-,
tensor- and pipeline-parallel traffic scales with the GPU count. A node with 8 GPUs and
one 200 Gbps port meets NET001's floor but feeds each GPU 25 Gbps, so collectives, not
math, set the step time.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 4
  gpu: {model: H100, per_node: 8}
fabric:
  kind: infiniband
  gbps_per_node: 400
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
fabric:
  kind: infiniband
  gbps_per_node: 3200
  rails: 8
```

## References
- nccl-tests issue 290 (NDR InfiniBand: 46-48 GB/s per NIC, 8 rails):
  https://github.com/NVIDIA/nccl-tests/issues/290
- nccl-tests, performance notes (bus bandwidth):
  https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule


class Net002Options(Options):
    """Fabric bandwidth per GPU floor."""

    min_gbps_per_gpu: Annotated[float, Field(gt=0, le=100_000)] = 100.0
    min_gpus: Annotated[int, Field(ge=1, le=10_000_000)] = 16


@rule(code="NET002", name="fabric-below-gpu-demand", severity="warning", options=Net002Options)
def check(ctx: RuleContext, options: Net002Options) -> Iterator[Hit]:
    """Less than min_gbps_per_gpu per GPU."""
    for doc, tc in ctx.training():
        nodes, gpus = tc.compute.total_nodes, tc.compute.total_gpus
        per_node = tc.compute.gpu.per_node if tc.compute.gpu else 0
        if nodes <= 1 or gpus < options.min_gpus or per_node == 0:
            continue
        per_gpu = tc.fabric.gbps_per_node / per_node
        if per_gpu < options.min_gbps_per_gpu:
            yield Hit(
                doc,
                ("fabric", "gbps_per_node"),
                f"fabric gives {per_gpu:g} Gbps per GPU ({tc.fabric.gbps_per_node} Gbps for "
                f"{per_node} GPUs per node); threshold: >= {options.min_gbps_per_gpu:g} Gbps "
                "per GPU (H100-class nodes ship 400)",
                f"provision {int(options.min_gbps_per_gpu * per_node)} Gbps per node or more, "
                "ideally one NIC per GPU",
                at=ctx.first_written(doc, ("fabric",), ("compute", "instance_type"), ("compute",)),
            )

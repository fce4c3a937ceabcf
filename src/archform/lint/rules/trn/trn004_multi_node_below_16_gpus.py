"""A multi-node training cluster with fewer than 16 GPUs.

## What it does
Flags a training cluster with more than one node but fewer than `min_gpus` (16) GPUs
in total.

## Why is this bad?
Below 16 GPUs the synchronisation overhead across nodes is not worth it: one 8-GPU node
with NVLink does the same work without a fabric, a scheduler across hosts or the extra
failure modes.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 2
  gpu: {model: L40S, per_node: 4}
fabric: {kind: roce, gbps_per_node: 100}
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
```

## References
- nccl-tests issue 212 (one H100 node: about 480 GB/s allreduce bus bandwidth):
  https://github.com/NVIDIA/nccl-tests/issues/212
- nccl-tests issue 290 (between nodes: 46-48 GB/s per NDR NIC):
  https://github.com/NVIDIA/nccl-tests/issues/290
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule


class Trn004Options(Options):
    """Smallest GPU count for which multi-node training pays off."""

    min_gpus: Annotated[int, Field(ge=1, le=10_000_000)] = 16


@rule(code="TRN004", name="multi-node-below-16-gpus", severity="warning", options=Trn004Options)
def check(ctx: RuleContext, options: Trn004Options) -> Iterator[Hit]:
    """More than one node, fewer than min_gpus GPUs."""
    for doc, tc in ctx.training():
        nodes, gpus = tc.compute.total_nodes, tc.compute.total_gpus
        if nodes > 1 and gpus < options.min_gpus:
            yield Hit(
                doc,
                ("compute", "nodes"),
                f"{nodes} nodes with {gpus} GPUs in total; threshold: multi-node from "
                f"{options.min_gpus} GPUs, below that one NVLink node avoids the fabric",
                "use one node with 8 GPUs, or grow to at least "
                f"{options.min_gpus} GPUs on a proper fabric",
            )

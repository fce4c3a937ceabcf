"""SHARP enabled on a fabric that is not rail-optimized.

## What it does
Flags `fabric.sharp: true` when `fabric.topology.kind` is not `rail_optimized`.

## Why is this bad?
A switch supports at most two SHARP streaming-aggregation flows and NCCL creates one per
HCA rail, so leaf switches must be rail-aligned; otherwise aggregation trees cannot be
built and NCCL falls back (or fails to initialise CollNet).

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
  gbps_per_node: 3200
  sharp: true
  topology: {kind: fat_tree}
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
  sharp: true
  topology: {kind: rail_optimized}
```

## References
- NVIDIA HPC-X, NCCL-RDMA-SHARP plugins (at most 2 aggregation flows per switch, one per HCA
  rail): https://docs.nvidia.com/networking/display/hpcxv226/NCCL-RDMA-SHARP-Plugins
- NVIDIA SHARP 3.9.1, using SHARP with NCCL:
  https://docs.nvidia.com/networking/display/sharpltsv391/using+nvidia+sharp+with+nvidia+nccl
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


@rule(code="NET007", name="sharp-without-rail-alignment", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """sharp: true without a rail-optimized topology."""
    for doc, tc in ctx.documents(TrainingCluster):
        if tc.fabric.sharp and tc.fabric.topology.kind != "rail_optimized":
            yield Hit(
                doc,
                ("fabric", "sharp"),
                f"SHARP on a {tc.fabric.topology.kind} topology; expected rail_optimized "
                "(one aggregation flow per HCA rail, at most 2 per switch)",
                "set fabric.topology.kind: rail_optimized (cable GPU i of every node to leaf i)"
                ", or turn sharp off",
            )

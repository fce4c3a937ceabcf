"""InfiniBand or EFA declared for a single node.

## What it does
Reports (info) a one-node TrainingCluster that declares `fabric.kind: infiniband` or
`efa`.

## Why is this bad?
Inside one node the GPUs talk over NVLink/NVSwitch; the inter-node fabric carries nothing
but storage traffic. For 4-8 GPUs in one node NVLink is
enough. The HCAs, switch ports
and subnet manager are cost without benefit until the cluster grows.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 1
  gpu: {model: H100, per_node: 8}
fabric:
  kind: infiniband
  gbps_per_node: 3200
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
fabric:
  kind: ethernet
  gbps_per_node: 100
```

## References
- NCCL environment variables (NVLink P2P inside a node):
  https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
- nccl-tests issue 212 (one H100 node: about 480 GB/s allreduce bus bandwidth):
  https://github.com/NVIDIA/nccl-tests/issues/212
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


@rule(code="NET003", name="infiniband-for-single-node", severity="info")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """A declared IB/EFA fabric on one node."""
    for doc, tc in ctx.documents(TrainingCluster):
        if (
            tc.compute.total_nodes == 1
            and tc.fabric.kind in ("infiniband", "efa")
            and ctx.written(doc, ("fabric", "kind"))
        ):
            yield Hit(
                doc,
                ("fabric", "kind"),
                f"{tc.fabric.kind} fabric declared for a single node; NVLink already connects "
                "its GPUs and the fabric pays off from 2 nodes (16 GPUs)",
                "drop the fabric until the cluster has more than one node",
            )

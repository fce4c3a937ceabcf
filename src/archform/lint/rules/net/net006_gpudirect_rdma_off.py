"""An RDMA fabric with GPUDirect RDMA switched off.

## What it does
Flags a multi-node training cluster on InfiniBand, RoCE or EFA with
`fabric.gpudirect_rdma: false`.

## Why is this bad?
Without GPUDirect RDMA (nvidia-peermem or DMA-BUF) NCCL stages every inter-node transfer
through host memory: an extra copy on each side, PCIe bandwidth spent twice, CPU memory
bandwidth contended with data loading.

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
  gpudirect_rdma: false
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
  gpudirect_rdma: true
```

## References
- NCCL environment variables, NCCL_NET_GDR_LEVEL and NCCL_DMABUF_ENABLE:
  https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
- NVIDIA GPU Operator, GPUDirect RDMA (nvidia-peermem or DMA-BUF):
  https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RDMA_FABRICS, RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="NET006", name="gpudirect-rdma-off", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """gpudirect_rdma false on an RDMA fabric."""
    for doc, tc in ctx.training():
        fabric = tc.fabric
        if fabric.kind in RDMA_FABRICS and not fabric.gpudirect_rdma and tc.compute.total_nodes > 1:
            yield Hit(
                doc,
                ("fabric", "gpudirect_rdma"),
                f"GPUDirect RDMA is off on a {fabric.kind} fabric of "
                f"{tc.compute.total_nodes} nodes; NCCL then copies every transfer through "
                "host memory",
                "set gpudirect_rdma: true (nvidia-peermem or DMA-BUF)",
            )

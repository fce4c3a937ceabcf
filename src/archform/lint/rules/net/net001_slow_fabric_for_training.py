"""Multi-node training on a fabric below 200 Gbps per node or without RDMA.

## What it does
Flags a multi-node training cluster with at least `min_gpus` (16) GPUs whose fabric gives
less than `min_gbps` (200) Gbps per node, or is plain Ethernet (`fabric.kind: ethernet`,
TCP sockets, no RDMA). The finding states what `archform estimate`'s step model gives for
the blueprint's workload (or, when it declares no `training.model_params`, an assumed Llama
3.1 70B FSDP run, said so in the message) on this fabric and on the reference fabric below:
tokens/s per GPU, step time and exposed data-parallel sync (TCP's copies are not modelled,
so an Ethernet figure is optimistic).

## Why is this bad?
Gradient allreduce time is bytes over bandwidth, so the finding states the node's own
ratio: its bandwidth against the fastest RDMA fabric archform's catalog lists for nodes of
the same GPU (a p5.48xlarge's 3,200 Gbps EFA for H100), or against the floor when the
catalog has none; TCP's copies and latency come on top of that ratio. At 16 GPUs and more the
allreduce share of every step grows with the GPU count, so the floor is 200 Gbps RDMA
(RoCE or InfiniBand); two nodes of four GPUs on 100 Gbps RoCE are fine, hence the 16-GPU
floor.

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
  kind: ethernet
  gbps_per_node: 100
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
```

## References
- nccl-tests, performance notes (bus bandwidth):
  https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
- nccl-tests issue 290 (NDR InfiniBand: 46-48 GB/s per NIC):
  https://github.com/NVIDIA/nccl-tests/issues/290
- Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication Operations in
  MPICH", IJHPCA 19(1), 2005 (ring allreduce cost model)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule
from archform.lint.training_numbers import versus
from archform.spec.catalog import InstanceInfo, load_catalog

if TYPE_CHECKING:
    from archform.spec.models.training import TrainingCluster


class Net001Options(Options):
    """Fabric floor for multi-node training."""

    min_gbps: Annotated[int, Field(ge=1, le=100_000)] = 200
    min_gpus: Annotated[int, Field(ge=1, le=10_000_000)] = 16


def reference_fabric(gpu_model: str | None) -> InstanceInfo | None:
    """The catalog instance with the most RDMA fabric bandwidth per node for this GPU model."""
    if gpu_model is None:
        return None
    catalog = load_catalog()
    gpu = catalog.gpu(gpu_model)
    if gpu is None:
        return None
    same = [
        i
        for i in catalog.instances.values()
        if i.gpu_model is not None
        and catalog.gpu(i.gpu_model) is gpu
        and i.fabric_kind not in ("ethernet", "none", "")
    ]
    return max(same, key=lambda i: (i.fabric_gbps, i.name), default=None)


def step_model_text(tc: TrainingCluster, floor: int) -> str:
    """The step model's tokens/s here vs on the reference fabric (or the floor), or ''."""
    gbps = tc.fabric.gbps_per_node
    ref = reference_fabric(tc.compute.gpu.model if tc.compute.gpu else None)
    if ref is not None and ref.fabric_gbps > gbps:
        label = f"{ref.name}'s {ref.fabric_gbps} Gbps {ref.fabric_kind}"
        return versus(tc, ref.fabric_gbps, label, ref.fabric_kind)
    return versus(tc, max(floor, gbps), f"{max(floor, gbps)} Gbps RDMA", "roce")


def ratio_text(gbps: int, gpu_model: str | None, floor: int) -> str:
    """How many times the node's bandwidth a reference fabric carries (catalog, else floor)."""
    ref = reference_fabric(gpu_model)
    if ref is not None and ref.fabric_gbps > gbps:
        return (
            f"{ref.name} ({gpu_model}) carries {ref.fabric_gbps} Gbps of {ref.fabric_kind}, "
            f"{ref.fabric_gbps / gbps:.3g}x this node's {gbps} Gbps"
        )
    return f"the {floor} Gbps floor is {floor / gbps:.3g}x this node's {gbps} Gbps"


@rule(code="NET001", name="slow-fabric-for-training", severity="error", options=Net001Options)
def check(ctx: RuleContext, options: Net001Options) -> Iterator[Hit]:
    """Slow or non-RDMA fabric for >= min_gpus GPUs over several nodes."""
    for doc, tc in ctx.training():
        nodes, gpus = tc.compute.total_nodes, tc.compute.total_gpus
        if nodes <= 1 or gpus < options.min_gpus:
            continue
        fabric = tc.fabric
        gpu_model = tc.compute.gpu.model if tc.compute.gpu else None
        at = ctx.first_written(doc, ("fabric",), ("compute", "instance_type"), ("compute",))
        if fabric.kind == "ethernet":
            yield Hit(
                doc,
                ("fabric", "kind"),
                f"{gpus} GPUs on {nodes} nodes train over plain Ethernet "
                f"({fabric.gbps_per_node} Gbps per node, TCP, no RDMA); threshold: RDMA "
                f"(InfiniBand or RoCE) at >= {options.min_gbps} Gbps per node from "
                f"{options.min_gpus} GPUs; "
                f"{ratio_text(fabric.gbps_per_node, gpu_model, options.min_gbps)}"
                f"{step_model_text(tc, options.min_gbps)}",
                f"use InfiniBand or RoCE (or the instance's EFA/RDMA fabric) at "
                f"{options.min_gbps} Gbps or more",
                at=at,
            )
        elif fabric.gbps_per_node < options.min_gbps:
            yield Hit(
                doc,
                ("fabric", "gbps_per_node"),
                f"{gpus} GPUs on {nodes} nodes share a {fabric.gbps_per_node} Gbps-per-node "
                f"{fabric.kind} fabric; threshold: >= {options.min_gbps} Gbps per node from "
                f"{options.min_gpus} GPUs; "
                f"{ratio_text(fabric.gbps_per_node, gpu_model, options.min_gbps)}"
                f"{step_model_text(tc, options.min_gbps)}",
                f"provision at least {options.min_gbps} Gbps per node",
                at=at,
            )

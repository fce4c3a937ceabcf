"""Fabric bandwidth per GPU is below what H100-class training needs.

## What it does
Flags a multi-node training cluster with at least `min_gpus` (16) GPUs whose fabric gives
less than `min_gbps_per_gpu` (100) Gbps per GPU (`gbps_per_node / gpus per node`). The
finding states what `archform estimate`'s step model gives for the blueprint's workload (or,
when it declares no `training.model_params`, an assumed Llama 3.1 70B FSDP run, said so in
the message) on this fabric and at the floor: tokens/s per GPU, step time and exposed
data-parallel sync.

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
from archform.lint.training_numbers import versus
from archform.spec.catalog import load_catalog
from archform.spec.provider import spec_of


class Net002Options(Options):
    """Fabric bandwidth per GPU floor."""

    min_gbps_per_gpu: Annotated[float, Field(gt=0, le=100_000)] = 100.0
    min_gpus: Annotated[int, Field(ge=1, le=10_000_000)] = 16


def instances_with_bandwidth(provider: str, gpu_model: str | None, min_per_gpu: float) -> list[str]:
    """Catalog instance types of the provider with this GPU (None: any) and enough fabric."""
    catalog = load_catalog()
    gpu = catalog.gpu(gpu_model) if gpu_model else None
    found = [
        i
        for i in catalog.instances.values()
        if i.provider == provider
        and i.gpu_model is not None
        and (gpu_model is None or (gpu is not None and catalog.gpu(i.gpu_model) is gpu))
        and i.gpu_count > 0
        and i.fabric_gbps / i.gpu_count >= min_per_gpu
    ]
    return [
        f"{i.name} ({i.fabric_gbps} Gbps {i.fabric_kind} for {i.gpu_count} {i.gpu_model})"
        for i in sorted(found, key=lambda i: (-i.fabric_gbps, i.name))[:2]
    ]


@rule(code="NET002", name="fabric-below-gpu-demand", severity="warning", options=Net002Options)
def check(ctx: RuleContext, options: Net002Options) -> Iterator[Hit]:
    """Less than min_gbps_per_gpu per GPU."""
    for doc, tc in ctx.training():
        nodes, gpus = tc.compute.total_nodes, tc.compute.total_gpus
        gpu = tc.compute.gpu
        per_node = gpu.per_node if gpu else 0
        if nodes <= 1 or gpus < options.min_gpus or gpu is None or per_node == 0:
            continue
        per_gpu = tc.fabric.gbps_per_node / per_node
        if per_gpu >= options.min_gbps_per_gpu:
            continue
        provider = tc.placement.provider
        fixed = spec_of(provider).cloud and tc.compute.instance_type is not None
        if fixed:
            floor = options.min_gbps_per_gpu
            better = instances_with_bandwidth(provider, gpu.model, floor)
            other = [] if better else instances_with_bandwidth(provider, None, floor)
            fixed_by = f"the {tc.compute.instance_type} fabric is fixed by the instance type; "
            if better:
                hint = fixed_by + "use " + " or ".join(better)
            elif other:
                hint = (
                    fixed_by + f"no {provider} {gpu.model} instance type in archform's catalog "
                    f"has {floor:g} Gbps per GPU; " + " or ".join(other) + " do"
                )
            else:
                hint = fixed_by + "accept the slower allreduce or move to a provider with RDMA"
        else:
            hint = (
                f"provision {int(options.min_gbps_per_gpu * per_node)} Gbps per node or more, "
                "ideally one NIC per GPU"
            )
        yield Hit(
            doc,
            ("fabric", "gbps_per_node"),
            f"fabric gives {per_gpu:g} Gbps per GPU ({tc.fabric.gbps_per_node} Gbps for "
            f"{per_node} GPUs per node); threshold: >= {options.min_gbps_per_gpu:g} Gbps "
            "per GPU"
            + versus(
                tc,
                int(options.min_gbps_per_gpu * per_node),
                f"{int(options.min_gbps_per_gpu * per_node)} Gbps per node "
                f"({options.min_gbps_per_gpu:g} per GPU)",
            ),
            hint,
            at=ctx.first_written(doc, ("fabric",), ("compute", "instance_type"), ("compute",)),
        )

"""Estimated exposed gradient sync exceeds 30% of the compute time per step.

## What it does
Estimates, for a multi-node training cluster with `training.model_params`, the gradient
synchronisation time per optimizer step that the framework cannot overlap with compute,
and flags it when it exceeds `exposed_fraction_threshold` (30%) of the estimated compute
time. The model lives in `archform.estimate.allreduce` (its docstring lists every constant
and source):

- sync = volume factor (FSDP/ZeRO-3 1.5, else 1.0) x 2(n-1)/n x gradient bytes / node
  busbw (fabric Gbps / 8 x `bus_efficiency` for a ring; at two nodes NCCL's tree, up to
  2(N-1)/N x that and capped by NVLink, as `archform.estimate.nccl` models it), plus a
  log-depth latency term;
- exposed = sync x (1 - `overlap`);
- compute = 6 x params x `training.global_batch_tokens` / (GPUs x dense bf16 TFLOPs x `mfu`).

GPUs without BF16 in the catalog (V100, T4) and GPUs the catalog does not know give no
estimate, so the rule stays silent for them.

## Why is this bad?
Exposed communication is time the GPUs sit idle: at 30% a third of the cluster's cost
buys nothing. A 70B FSDP run on 32 x 8 H100 with 8 x 400 Gbps InfiniBand syncs in about
1.1 s against ~17 s of compute; on 100 Gbps Ethernet the same sync takes ~37 s.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 32
  gpu: {model: H100, per_node: 8}
fabric:
  kind: roce
  gbps_per_node: 200
training:
  framework: pytorch_fsdp
  model_params: 70e9
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 32
  gpu: {model: H100, per_node: 8}
fabric:
  kind: infiniband
  gbps_per_node: 3200
training:
  framework: pytorch_fsdp
  model_params: 70e9
```

## References
- Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication Operations in
  MPICH", IJHPCA 19(1), 2005 (ring allreduce cost model)
- nccl-tests issue 290 (NDR bus bandwidth per NIC):
  https://github.com/NVIDIA/nccl-tests/issues/290
- Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
  arXiv:1910.02054 s7
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.estimate import allreduce
from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule

REFERENCE_GBPS = 3200  # 8 x 400 Gbps NDR, the H100-class node fabric, for comparison


class Net008Options(Options):
    """Thresholds and assumptions of the step-time model."""

    exposed_fraction_threshold: Annotated[float, Field(gt=0, le=1)] = 0.30
    mfu: Annotated[float, Field(gt=0, le=1)] = allreduce.MFU
    overlap: Annotated[float, Field(ge=0, le=1)] = allreduce.OVERLAP
    bus_efficiency: Annotated[float, Field(gt=0, le=1)] = allreduce.BUS_EFFICIENCY
    bucket_mib: Annotated[float, Field(gt=0, le=65_536)] = allreduce.BUCKET_MIB


@rule(code="NET008", name="allreduce-dominates-step", severity="warning", options=Net008Options)
def check(ctx: RuleContext, options: Net008Options) -> Iterator[Hit]:
    """Exposed sync / compute above the threshold."""
    for doc, tc in ctx.training():
        work = tc.training
        gpu = tc.compute.gpu
        if work is None or work.model_params is None or gpu is None or tc.compute.total_nodes < 2:
            continue
        info = ctx.catalog.gpu(gpu.model)
        if info is None:
            continue
        est = allreduce.estimate_step(
            params=work.model_params,
            tokens=work.global_batch_tokens,
            framework=work.framework,
            precision=work.precision,
            gpus=tc.compute.total_gpus,
            nodes=tc.compute.total_nodes,
            gbps_per_node=tc.fabric.gbps_per_node,
            fabric_kind=tc.fabric.kind,
            bf16_tflops=info.bf16_dense_tflops,
            mfu=options.mfu,
            overlap=options.overlap,
            bus_efficiency=options.bus_efficiency,
            bucket_mib=options.bucket_mib,
            gpu=info.name,
        )
        if est is None or est.exposed_fraction <= options.exposed_fraction_threshold:
            continue
        reference = allreduce.estimate_step(
            params=work.model_params,
            tokens=work.global_batch_tokens,
            framework=work.framework,
            precision=work.precision,
            gpus=tc.compute.total_gpus,
            nodes=tc.compute.total_nodes,
            gbps_per_node=REFERENCE_GBPS,
            fabric_kind="infiniband",
            bf16_tflops=info.bf16_dense_tflops,
            mfu=options.mfu,
            overlap=options.overlap,
            bus_efficiency=options.bus_efficiency,
            bucket_mib=options.bucket_mib,
            gpu=info.name,
        )
        versus = f" vs {reference.sync_s:.1f} s on 8 x 400 Gbps InfiniBand" if reference else ""
        yield Hit(
            doc,
            ("fabric", "gbps_per_node"),
            f"estimated exposed gradient sync {est.exposed_s:.1f} s per step is "
            f"{est.exposed_fraction:.0%} of the {est.compute_s:.1f} s compute; threshold "
            f"{options.exposed_fraction_threshold:.0%}. {tc.fabric.gbps_per_node} Gbps per node "
            f"gives {est.busbw_bytes_per_s / 1e9:.1f} GB/s busbw; {work.framework} moves "
            f"{est.volume_factor:g} x {est.gradient_bytes / 1e9:.0f} GB of gradients over "
            f"{est.gpus} GPUs ({est.sync_s:.1f} s sync{versus}, {options.overlap:.0%} overlapped)",
            "use a faster fabric (8 x 400 Gbps per node for H100-class), fewer nodes with a "
            "larger batch, or a sharding/parallelism scheme that moves less data",
            at=ctx.first_written(doc, ("fabric",), ("compute", "instance_type"), ("compute",)),
        )

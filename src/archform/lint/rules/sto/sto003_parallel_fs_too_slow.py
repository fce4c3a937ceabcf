"""The parallel file system is too slow for the GPUs or the checkpoints.

## What it does
For a training cluster, computes the throughput of each parallel file system
(`capacity_tib x throughput_mbps_per_tib`, see `archform.estimate.storage`) and flags:

- training data below `data_gbps_per_8_gpus` (1 GB/s) per 8 GPUs;
- checkpoint storage that needs longer than `checkpoint_budget` (10%) of
  `training.checkpoint_interval_minutes` to write one full checkpoint of
  `training.model_params x 16` bytes (mixed-precision Adam model states, arXiv:1910.02054).

Entries without `throughput_mbps_per_tib` are not judged.

## Why is this bad?
Managed Lustre throughput scales with capacity times tier: a small, low-tier file system
starves the data loaders, and a checkpoint that takes minutes stalls every GPU while it is
written (or forces rarer checkpoints, which lose more work per failure).

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 32
  gpu: {model: H100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 3200}
storage:
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 10
    throughput_mbps_per_tib: 125
    mount: /lustre/data
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
fabric: {kind: infiniband, gbps_per_node: 3200}
storage:
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 48
    throughput_mbps_per_tib: 1000
    mount: /lustre/data
```

## References
- Amazon FSx for Lustre performance (MB/s per TiB):
  https://docs.aws.amazon.com/fsx/latest/LustreGuide/performance.html
- Google Cloud Managed Lustre, performance tiers:
  https://cloud.google.com/managed-lustre/docs/performance-tiers
- Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
  arXiv:1910.02054 s3.1 (16 bytes per parameter)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.estimate import storage as est
from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule

PARALLEL = frozenset({"lustre", "gpfs", "weka"})


class Sto003Options(Options):
    """Ingest and checkpoint budgets."""

    data_gbps_per_8_gpus: Annotated[float, Field(gt=0, le=100_000)] = est.DATA_GBPS_PER_8_GPUS
    checkpoint_budget: Annotated[float, Field(gt=0, le=1)] = 0.10


@rule(code="STO003", name="parallel-fs-too-slow", severity="warning", options=Sto003Options)
def check(ctx: RuleContext, options: Sto003Options) -> Iterator[Hit]:
    """Throughput vs GPUs, checkpoint write time vs interval."""
    for doc, tc in ctx.training():
        gpus = tc.compute.total_gpus
        work = tc.training
        for i, store in enumerate(tc.storage):
            if store.kind not in PARALLEL or store.throughput_mbps_per_tib is None:
                continue
            have = est.throughput_gbps(store.size_tib, store.throughput_mbps_per_tib)
            loc = ("storage", i, "throughput_mbps_per_tib")
            if store.purpose == "training_data":
                need = est.required_data_gbps(gpus, options.data_gbps_per_8_gpus)
                if have < need:
                    yield Hit(
                        doc,
                        loc,
                        f"training data {store.name!r} delivers {have:.1f} GB/s "
                        f"({store.capacity_tib:g} TiB x {store.throughput_mbps_per_tib} MB/s/TiB)"
                        f" for {gpus} GPUs; threshold: {need:.1f} GB/s "
                        f"({options.data_gbps_per_8_gpus:g} GB/s per 8 GPUs)",
                        "raise capacity_tib or the throughput tier so capacity x tier reaches "
                        f"{need:.1f} GB/s",
                    )
            elif store.purpose == "checkpoints" and work and work.model_params:
                interval = work.checkpoint_interval_minutes
                if interval is None:
                    continue
                seconds = est.checkpoint_write_seconds(work.model_params, have)
                budget = interval * 60 * options.checkpoint_budget
                if seconds > budget:
                    size_tb = est.checkpoint_bytes(work.model_params) / 1e12
                    yield Hit(
                        doc,
                        loc,
                        f"one {size_tb:.2f} TB checkpoint takes {seconds:.0f} s to write at "
                        f"{have:.1f} GB/s; threshold: {budget:.0f} s "
                        f"({options.checkpoint_budget:.0%} of the {interval}-minute interval)",
                        "raise the checkpoint file system's capacity x tier, or checkpoint "
                        "less often with asynchronous writes",
                    )

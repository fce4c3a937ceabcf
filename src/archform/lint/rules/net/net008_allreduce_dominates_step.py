"""Estimated exposed gradient sync exceeds 30% of the compute time per step.

## What it does
Runs the training step model of `archform estimate` (archform.estimate.training, its
docstring lists every constant and source) on a multi-node training cluster with
`training.model_params` (or `training.model`), and flags it when the data-parallel
communication the step cannot hide behind compute exceeds `exposed_fraction_threshold`
(30%) of the step's compute time. The figures are those of `archform estimate
--format json` for the same blueprint (`step.data_parallel_exposed_s` over
`step.compute_s`):

- the data-parallel collectives by ZeRO stage (stage 0 all-reduces the gradients; stages
  1-2 reduce-scatter them and all-gather the parameters; stage 3 / FSDP FULL_SHARD
  all-gathers the parameters once more), each at the bus bandwidth NCCL reaches over the
  nodes it spans (archform.estimate.nccl, calibrated on published nccl-tests figures);
- each collective hides behind its pass (forward a third of compute, backward two
  thirds) up to the fitted overlap fraction; the rest is exposed;
- compute is the model's FLOPs per token (6 P + 12 L H S) at the GPU's fitted efficiency.

The finding compares the step with the same cluster on 8 x 400 Gbps InfiniBand. GPUs
without BF16 in the catalog (V100, T4) and GPUs the catalog does not know give no
estimate, so the rule stays silent for them.

## Why is this bad?
Exposed communication is time the GPUs sit idle: at 30% a quarter of the cluster's cost
buys nothing. A 70B FSDP run on 32 x 8 H100 hides its parameter all-gathers and gradient
reduce-scatter behind compute on 8 x 400 Gbps InfiniBand; on 200 Gbps RoCE the same
collectives take several times the compute (`archform estimate` on both shows the step).

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
- nccl-tests performance notes (bus bandwidth):
  https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
- nccl-tests issue 290 (NDR bus bandwidth per NIC):
  https://github.com/NVIDIA/nccl-tests/issues/290
- Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
  arXiv:1910.02054 s7
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule
from archform.lint.training_numbers import versus

if TYPE_CHECKING:
    from archform.estimate.training import StepTime

REFERENCE_GBPS = 3200  # 8 x 400 Gbps NDR, the H100-class node fabric, for comparison
REFERENCE = "8 x 400 Gbps InfiniBand"


class Net008Options(Options):
    """Threshold on the step model's exposed data-parallel time."""

    exposed_fraction_threshold: Annotated[float, Field(gt=0, le=1)] = 0.30


def collectives_text(step: StepTime) -> str:
    """'all-reduce of 140 GB of gradients 0.73 s, ...' as the estimate's JSON lists them."""
    return ", ".join(
        f"{c.name} of {c.gbytes:,.0f} GB of {c.what} {round(c.seconds, 3):.2f} s"
        for c in step.collectives
    )


@rule(code="NET008", name="allreduce-dominates-step", severity="warning", options=Net008Options)
def check(ctx: RuleContext, options: Net008Options) -> Iterator[Hit]:
    """Exposed data-parallel time / compute time of the step model above the threshold."""
    from archform.estimate import training_plan

    for doc, tc in ctx.training():
        work = tc.training
        if work is None or work.model_params is None or tc.compute.total_nodes < 2:
            continue
        if training_plan.why_not(tc) is not None:
            continue
        est = training_plan.estimate(tc)
        step = est.step
        # Rounded as `archform estimate --format json` rounds them.
        exposed, compute = round(step.dp_exposed_s, 3), round(step.compute_s, 3)
        if compute <= 0 or exposed / compute <= options.exposed_fraction_threshold:
            continue
        fabric = tc.fabric
        faster = fabric.gbps_per_node < REFERENCE_GBPS or fabric.kind != "infiniband"
        compared = versus(tc, REFERENCE_GBPS, REFERENCE, "infiniband") if faster else ""
        par = est.parallelism
        yield Hit(
            doc,
            ("fabric", "gbps_per_node"),
            f"estimated exposed data-parallel sync {exposed:.2f} s per step is "
            f"{exposed / compute:.0%} of the {compute:.2f} s compute; threshold "
            f"{options.exposed_fraction_threshold:.0%}. {fabric.gbps_per_node} Gbps per node "
            f"gives {step.dp_busbw_gbytes:g} GB/s busbw ({step.dp_algorithm}); "
            f"{par.framework} (ZeRO stage {par.zero_stage}) over {step.data_parallel} "
            f"data-parallel ranks runs {collectives_text(step)} per step "
            f"({round(step.dp_sync_s, 3):.2f} s of sync){compared}",
            "use a faster fabric (8 x 400 Gbps per node for H100-class), fewer nodes with a "
            "larger batch, or tensor/pipeline parallelism so less data crosses the fabric",
            at=ctx.first_written(doc, ("fabric",), ("compute", "instance_type"), ("compute",)),
        )

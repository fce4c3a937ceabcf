"""A TrainingCluster's training workload through the step model: throughput, MFU, time, cost.

The model's shape is the blueprint's (`layers`, `hidden_size`) or, when not given, that of the
reference model nearest in parameter count (their published Hugging Face config.json:
https://huggingface.co/meta-llama/<model>/blob/main/config.json, num_hidden_layers and
hidden_size). Cost is the GPU nodes at their purchase option's list price
(archform.estimate.prices; on-demand for on_demand/reserved/capacity_block, spot for spot).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from archform.estimate import training, training_memory
from archform.estimate.prices import PriceTable, load_prices
from archform.spec.catalog import load_catalog
from archform.spec.models.training import TrainingCluster, TrainingWorkload
from archform.spec.open_models import open_model

# (params, layers, hidden) of public dense models.
REFERENCE_SHAPES: dict[str, tuple[float, int, int]] = {
    "llama-3.2-1b": (1.24e9, 16, 2048),
    "llama-3.2-3b": (3.21e9, 28, 3072),
    "llama-3.1-8b": (8.03e9, 32, 4096),
    "llama-2-13b": (13.0e9, 40, 5120),
    "llama-3.1-70b": (70.6e9, 80, 8192),
    "llama-3.1-405b": (405e9, 126, 16384),
}


@dataclass(frozen=True, slots=True)
class TrainingEstimate:
    """What the cluster delivers for its declared workload."""

    name: str
    gpu: str
    gpus: int
    nodes: int
    fabric: str
    gbps_per_node: int
    shape: training.ModelShape
    shape_assumed_from: str | None
    parallelism: training.Parallelism
    peak_tflops: float  # dense, of the precision the GEMMs run in (fp8 or bf16)
    step: training.StepTime
    memory: training_memory.Memory | None  # None when the GPU's memory is not known
    tokens_per_s: float  # whole cluster
    usd_per_hour: float | None
    price_missing: str | None
    token_budget: float | None
    hours_for_budget: float | None
    usd_for_budget: float | None


def shape_of(
    params: float, layers: int | None, hidden: int | None
) -> tuple[training.ModelShape, str | None]:
    """The declared shape, completed from the nearest reference model."""
    if layers and hidden:
        return training.ModelShape(params, layers, hidden), None
    name, (_, ref_layers, ref_hidden) = min(
        REFERENCE_SHAPES.items(), key=lambda kv: abs(math.log(kv[1][0] / params))
    )
    return training.ModelShape(params, layers or ref_layers, hidden or ref_hidden), name


def why_not(cluster: TrainingCluster) -> str | None:
    """Why the cluster has no estimate, or None."""
    work = cluster.training
    gpu = cluster.compute.gpu
    if work is None or work.model_params is None:
        return "no training workload with model_params declared (training: model_params)"
    if gpu is None or cluster.compute.total_gpus == 0:
        return "no GPUs in the compute group"
    if training.peak_tflops(gpu.model) <= 0:
        return f"{gpu.model} has no BF16 tensor rate in archform's catalog"
    if work.precision == "fp8" and training.fp8_peak_tflops(gpu.model) <= 0:
        return f"{gpu.model} has no FP8 tensor rate in archform's catalog (lint: TRN009)"
    return None


def estimate(cluster: TrainingCluster, table: PriceTable | None = None) -> TrainingEstimate:
    """The step model on the blueprint's declared workload (call why_not first)."""
    work = cluster.training
    gpu = cluster.compute.gpu
    assert work is not None and work.model_params is not None and gpu is not None
    shape, assumed = shape_of(float(work.model_params), work.layers, work.hidden_size)
    gpus = cluster.compute.nodes * gpu.per_node  # the primary group (extra groups: TRN007)
    par = parallelism_of(cluster)
    rates = training.ClusterRates(
        gpu.model,
        training.peak_tflops(gpu.model),
        float(cluster.fabric.gbps_per_node),
        training.fp8_peak_tflops(gpu.model),
    )
    peak = rates.fp8_peak_tflops if work.precision == "fp8" else rates.peak_tflops
    step = training.step_time(shape, par, rates)
    held = memory_of(cluster, shape, par, step.data_parallel)
    tokens_per_s = step.tokens_per_s_per_gpu * gpus
    prices = table or load_prices()
    region = cluster.placement.primary_region
    itype = cluster.compute.instance_type
    rate = None
    missing = None
    if itype is None:
        missing = "no instance_type (on-prem nodes have no list price)"
    else:
        rate = prices.rate(itype, region, cluster.compute.purchase == "spot")
        if rate is None:
            missing = f"no price for {itype} in {region}"
    nodes = cluster.compute.nodes
    per_hour = None if rate is None else round(rate * nodes, 2)
    budget = None if work.token_budget is None else float(work.token_budget)
    hours = None if budget is None else budget / tokens_per_s / 3600
    cost = None if hours is None or per_hour is None else round(hours * per_hour, 0)
    return TrainingEstimate(
        name=cluster.name,
        gpu=gpu.model,
        gpus=gpus,
        nodes=nodes,
        fabric=cluster.fabric.kind,
        gbps_per_node=cluster.fabric.gbps_per_node,
        shape=shape,
        shape_assumed_from=assumed,
        parallelism=par,
        peak_tflops=peak,
        step=step,
        memory=held,
        tokens_per_s=tokens_per_s,
        usd_per_hour=per_hour,
        price_missing=missing,
        token_budget=budget,
        hours_for_budget=hours,
        usd_for_budget=cost,
    )


def parallelism_of(cluster: TrainingCluster) -> training.Parallelism:
    """The declared layout of the primary compute group (defaults: plain data parallelism)."""
    work = cluster.training
    gpu = cluster.compute.gpu
    assert work is not None and gpu is not None
    return training.Parallelism(
        framework=work.framework,
        gpus=cluster.compute.nodes * gpu.per_node,
        gpus_per_node=gpu.per_node,
        tensor_parallel=work.tensor_parallel,
        pipeline_parallel=work.pipeline_parallel,
        micro_batch=work.micro_batch_size,
        sequence_length=work.sequence_length,
        global_batch_tokens=float(work.global_batch_tokens),
        recompute=work.activation_checkpointing,
        virtual_stages=work.virtual_pipeline_stages,
        context_parallel=work.context_parallel,
        zero_stage=training_memory.zero_stage(work.framework, work.zero_stage),
        precision=work.precision,
    )


def memory(cluster: TrainingCluster) -> training_memory.Memory | None:
    """What one GPU holds, as the estimate counts it; None without a model or GPU memory.

    Needs no tensor rate, so it answers for GPUs the step model cannot time (lint: TRN010).
    """
    work = cluster.training
    gpu = cluster.compute.gpu
    if work is None or work.model_params is None or gpu is None or gpu.per_node == 0:
        return None
    shape, _ = shape_of(float(work.model_params), work.layers, work.hidden_size)
    par = parallelism_of(cluster)
    mp = par.tensor_parallel * par.pipeline_parallel * par.context_parallel
    return memory_of(cluster, shape, par, max(1, par.gpus // mp))


def memory_of(
    cluster: TrainingCluster, shape: training.ModelShape, par: training.Parallelism, dp: int
) -> training_memory.Memory | None:
    """Model states by ZeRO stage plus activations on one GPU (estimate.training_memory)."""
    gpu = cluster.compute.gpu
    work = cluster.training
    assert gpu is not None and work is not None
    info = load_catalog().gpu(gpu.model)
    memory_gib = gpu.memory_gib or (info.memory_gib if info else None)
    if memory_gib is None:
        return None
    named = open_model(work.model) if work.model else None
    mp = par.tensor_parallel * par.pipeline_parallel
    # Not written: the least memory (full recomputation), as lint's TRN010 counts it.
    written = "activation_checkpointing" in work.model_fields_set
    recompute = par.recompute if written else "full"
    return training_memory.Memory(
        stage=par.zero_stage,
        states=training_memory.model_state_bytes(shape.params, par.zero_stage, mp, dp),
        activations=training_memory.activation_bytes(
            shape.layers,
            shape.hidden,
            named.attention_heads if named else None,
            par.sequence_length,
            par.micro_batch,
            par.tensor_parallel,
            recompute,
            par.context_parallel,
        ),
        gpu_bytes=memory_gib * 2**30,
        recompute=f"{'no' if recompute == 'none' else recompute} recomputation"
        if written
        else "full recomputation, not written: the least",
    )


#: The workload assumed when a blueprint declares no model (lint's fabric findings): the
#: 70B fine-tune of the issue's article, on the defaults of `training` (FSDP, 4M-token batch).
ASSUMED_MODEL = "llama-3.1-70b"


@dataclass(frozen=True, slots=True)
class FabricWhatIf:
    """The estimate on the blueprint's fabric and on another one."""

    here: TrainingEstimate
    there: TrainingEstimate
    assumed: str | None  # the workload assumed when the blueprint declares none

    @property
    def slowdown(self) -> float:
        """Step time here over step time there."""
        return self.here.step.step_s / self.there.step.step_s


def with_workload(cluster: TrainingCluster) -> tuple[TrainingCluster, str | None]:
    """The cluster with its declared workload, or with ASSUMED_MODEL and why."""
    work = cluster.training
    if work is not None and work.model_params is not None:
        return cluster, None
    data = {} if work is None else work.model_dump(exclude_unset=True)
    data["model"] = ASSUMED_MODEL
    assumed = TrainingWorkload.model_validate(data)
    text = (
        f"no training.model_params declared: {ASSUMED_MODEL} assumed, "
        f"{assumed.framework}, {assumed.global_batch_tokens:,.0f}-token batches of "
        f"{assumed.sequence_length:,} tokens"
    )
    return cluster.model_copy(update={"training": assumed}), text


def fabric_what_if(
    cluster: TrainingCluster, gbps_per_node: int, kind: str | None = None
) -> FabricWhatIf | None:
    """The step model on the blueprint's fabric and on `gbps_per_node` (None: no estimate)."""
    subject, assumed = with_workload(cluster)
    if why_not(subject) is not None:
        return None
    fabric = subject.fabric.model_copy(
        update={"gbps_per_node": gbps_per_node, "kind": kind or subject.fabric.kind}
    )
    other = subject.model_copy(update={"fabric": fabric})
    return FabricWhatIf(estimate(subject), estimate(other), assumed)

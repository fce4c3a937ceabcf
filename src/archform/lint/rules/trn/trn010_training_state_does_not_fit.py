"""The training state of one GPU exceeds its memory for the declared framework and parallelism.

## What it does
Computes a lower bound of what one GPU holds while training `training.model` (or
`model_params`) with mixed-precision Adam, and flags it when it exceeds the GPU's memory:

- model states (Rajbhandari et al. 2020, ZeRO, section 3.1): 2 bytes of bf16/fp16 weights +
  2 of gradients + 12 of fp32 optimizer state (master weights, momentum, variance) = 16 bytes
  per parameter, first divided by tensor_parallel x pipeline_parallel (each GPU holds its
  slice of the layers), then by the data-parallel degree N = GPUs / (TP x PP) as the ZeRO
  stage shards them: stage 0 (PyTorch DDP) nothing, 1 the optimizer state (4 + 12/N),
  2 also the gradients (2 + 14/N), 3 (FSDP FULL_SHARD) everything (16/N);
- activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
  Transformer Models", section 4), counted only when the layers and hidden size are known
  (a named model, or `training.layers` and `hidden_size`): per layer
  34 x sequence_length x micro_batch_size x hidden / TP bytes with selective recomputation
  (the attention scores are recomputed; sequence parallelism assumed, its smallest form),
  2 x s x b x h / TP with full recomputation, and s x b x h x (34 + 5 x heads x s / h) / TP
  without; with 1F1B pipelining the first stage holds as many micro-batches as there are
  stages, so one GPU holds the activations of all `layers` (the paper's equation 5).
  When `activation_checkpointing` is not written, full recomputation (the least) is assumed.

The framework's default ZeRO stage is used when `training.zero_stage` is not given:
pytorch_ddp 0 and pytorch_fsdp 3; other frameworks are checked only with `zero_stage`
declared (their sharding lives in their own configuration). Buffers, fragmentation and the
CUDA context are left out, so a finding is never a false alarm from them.

## Why is this bad?
A job whose state does not fit stops with CUDA out-of-memory on its first step. PyTorch DDP
keeps the whole model, its gradients and Adam's state on every GPU: a 70B model needs
about 1.1 TB per GPU, fourteen times an 80 GB H100.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute: {nodes: 4, instance_type: p5.48xlarge}
training: {framework: pytorch_ddp, model: llama-3.1-70b}
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute: {nodes: 4, instance_type: p5.48xlarge}
training: {framework: pytorch_fsdp, model: llama-3.1-70b}
```

## References
- Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
  Models", SC 2020: https://arxiv.org/abs/1910.02054
- Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
  MLSys 2023: https://arxiv.org/abs/2205.05198
- PyTorch FSDP sharding strategies (FULL_SHARD default):
  https://pytorch.org/docs/stable/fsdp.html
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from archform.estimate.training_memory import activation_bytes, model_state_bytes
from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.catalog import load_catalog
from archform.spec.open_models import open_model

RECOMPUTE = {"none": "no", "selective": "selective", "full": "full"}
DEFAULT_STAGE = {"pytorch_ddp": 0, "pytorch_fsdp": 3}
GB = 1e9

if TYPE_CHECKING:
    from archform.spec.models import TrainingCluster


@dataclass(frozen=True, slots=True)
class State:
    """Bytes one GPU holds, and how they were counted."""

    states: float
    activations: float | None
    stage: int
    data_parallel: int
    gpu_bytes: float
    gpu_model: str


def state(tc: TrainingCluster, recompute: str | None = None) -> State | None:
    """The per-GPU state of the cluster's training workload, or None when not computable."""
    work = tc.training
    gpu = tc.compute.gpu
    if work is None or work.model_params is None or gpu is None:
        return None
    stage = work.zero_stage if work.zero_stage is not None else DEFAULT_STAGE.get(work.framework)
    if stage is None:
        return None
    info = load_catalog().gpu(gpu.model)
    memory_gib = gpu.memory_gib or (info.memory_gib if info else None)
    if memory_gib is None:
        return None
    mp = work.tensor_parallel * work.pipeline_parallel
    dp = max(1, tc.compute.total_gpus // mp)
    named = open_model(work.model) if work.model else None
    activations = None
    if work.layers is not None and work.hidden_size is not None:
        activations = activation_bytes(
            work.layers,
            work.hidden_size,
            named.attention_heads if named else None,
            work.sequence_length,
            work.micro_batch_size,
            work.tensor_parallel,
            recompute or work.activation_checkpointing,
        )
    return State(
        states=model_state_bytes(work.model_params, stage, mp, dp),
        activations=activations,
        stage=stage,
        data_parallel=dp,
        gpu_bytes=memory_gib * 2**30,
        gpu_model=gpu.model,
    )


def _size(n: float) -> str:
    return f"{n / 1e12:.2f} TB" if n >= 1e12 else f"{n / GB:.1f} GB"


@rule(code="TRN010", name="training-state-does-not-fit", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Weights + gradients + Adam state (+ activations) per GPU > GPU memory."""
    for doc, tc in ctx.training():
        written = ctx.written(doc, ("training", "activation_checkpointing"))
        work = tc.training
        # Not written: the least memory (full recomputation), never a false alarm.
        recompute = (work.activation_checkpointing if written else "full") if work else "full"
        s = state(tc, recompute)
        if s is None:
            continue
        total = s.states + (s.activations or 0.0)
        if total <= s.gpu_bytes:
            continue
        assert work is not None
        what = work.model or f"{(work.model_params or 0.0) / 1e9:g}B-parameter model"
        acts = (
            f" + {_size(s.activations)} activations ({RECOMPUTE[recompute]} recomputation"
            f"{'' if written else ', the least'}, {work.sequence_length} tokens x micro-batch "
            f"{work.micro_batch_size})"
            if s.activations is not None
            else ""
        )
        hint = (
            "shard the state: pytorch_fsdp (FULL_SHARD) or zero_stage 3 divides it by the "
            f"{s.data_parallel} data-parallel GPUs"
            if s.stage < 3
            else "add GPUs, tensor/pipeline parallelism, or full activation recomputation"
        )
        yield Hit(
            doc,
            ctx.first_written(doc, ("training", "zero_stage"), ("training", "framework")),
            f"{work.framework} (ZeRO stage {s.stage}, TP {work.tensor_parallel} x PP "
            f"{work.pipeline_parallel}, data parallel {s.data_parallel}) of {what} needs "
            f"{_size(total)} per GPU: {_size(s.states)} weights, gradients and Adam state "
            f"(16 bytes per parameter, ZeRO paper){acts}; threshold: {_size(s.gpu_bytes)} "
            f"({s.gpu_bytes / 2**30:g} GiB) per {s.gpu_model}",
            hint,
            at=("training",),
        )

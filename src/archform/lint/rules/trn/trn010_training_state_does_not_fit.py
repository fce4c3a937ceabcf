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
  Transformer Models", section 4) of the model's layers and hidden size (a named model,
  `training.layers` and `hidden_size`, else the nearest reference model's, as `archform
  estimate` assumes them): per layer
  34 x sequence_length x micro_batch_size x hidden / TP bytes with selective recomputation
  (the attention scores are recomputed; sequence parallelism assumed, its smallest form),
  2 x s x b x h / TP with full recomputation, and s x b x h x (34 + 5 x heads x s / h) / TP
  without; with 1F1B pipelining the first stage holds as many micro-batches as there are
  stages, so one GPU holds the activations of all `layers` (the paper's equation 5).
  When `activation_checkpointing` is not written, full recomputation (the least) is assumed.

The figures are those of `archform estimate` for the same blueprint (its `memory_per_gpu`,
from archform.estimate.training_plan): the estimate says DOES NOT FIT exactly when this rule
fires. When `training.zero_stage` is not given the framework's default is used, with its
source (spec/data/framework_zero_stage.yaml): pytorch_ddp 0 and pytorch_fsdp 3 are the
frameworks' design, so an overflow is an error; deepspeed 0, megatron 0, nemo 1 (the
recipes' distributed optimizer) and the others 0 are what their own configuration file does
when it sets nothing, so the finding is a warning that names the default and asks for
`zero_stage` to be written. Buffers, fragmentation and the CUDA context are left out, so a
finding is never a false alarm from them.

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
- DeepSpeed configuration, ZeRO optimizations (stage 0 unless set):
  https://www.deepspeed.ai/docs/config-json/#zero-optimizations-for-fp16-training
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule

GB = 1e9


def _size(n: float) -> str:
    return f"{n / 1e12:.2f} TB" if n >= 1e12 else f"{n / GB:.1f} GB"


def _gb(n: float) -> str:
    """As `archform estimate` prints memory: GB rounded to 0.01, shown to 0.1."""
    return f"{round(n / GB, 2):,.1f} GB"


@rule(code="TRN010", name="training-state-does-not-fit", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Weights + gradients + Adam state + activations per GPU > GPU memory (the estimate's)."""
    from archform.estimate import training_memory, training_plan  # first use: light start-up

    for doc, tc in ctx.training():
        work = tc.training
        gpu = tc.compute.gpu
        held = training_plan.memory(tc)
        if work is None or gpu is None or held is None or held.fits:
            continue
        par = training_plan.parallelism_of(tc)
        dp = max(
            1, par.gpus // (par.tensor_parallel * par.pipeline_parallel * par.context_parallel)
        )
        what = work.model or f"{(work.model_params or 0.0) / 1e9:g}B-parameter model"
        acts = (
            f" + {_size(held.activations)} activations ({held.recompute}, "
            f"{work.sequence_length} tokens x micro-batch {work.micro_batch_size})"
        )
        layout = (
            f"ZeRO stage {held.stage}, TP {par.tensor_parallel} x PP {par.pipeline_parallel}"
            + (f" x CP {par.context_parallel}" if par.context_parallel > 1 else "")
            + f", data parallel {dp}"
        )
        default = training_memory.default_stage(work.framework)
        if work.zero_stage is None and not default.fixed:
            yield Hit(
                doc,
                ("training", "framework"),
                f"zero_stage is not written; at {work.framework}'s default (stage "
                f"{default.stage}, {default.source}) the state is {_gb(held.total)} per GPU of "
                f"{_gb(held.gpu_bytes)}: {work.framework} ({layout}) of {what} holds "
                f"{_size(held.states)} weights, gradients and Adam state (16 bytes per "
                f"parameter, ZeRO paper){acts}; `archform estimate` says it does not fit",
                "write training.zero_stage as the framework's configuration sets it (3 shards "
                f"weights, gradients and Adam state over the {dp} data-parallel GPUs), or add "
                "tensor/pipeline parallelism",
                severity="warning",
                at=("training",),
            )
            continue
        hint = (
            "shard the state: pytorch_fsdp (FULL_SHARD) or zero_stage 3 divides it by the "
            f"{dp} data-parallel GPUs"
            if held.stage < 3
            else "add GPUs, tensor/pipeline parallelism, or full activation recomputation"
        )
        yield Hit(
            doc,
            ctx.first_written(doc, ("training", "zero_stage"), ("training", "framework")),
            f"{work.framework} ({layout}) of {what} needs "
            f"{_size(held.total)} per GPU: {_size(held.states)} weights, gradients and Adam state "
            f"(16 bytes per parameter, ZeRO paper){acts}; threshold: {_size(held.gpu_bytes)} "
            f"({held.gpu_bytes / 2**30:g} GiB) per {gpu.model}",
            hint,
            at=("training",),
        )

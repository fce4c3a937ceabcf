"""What one GPU holds while training: model states by ZeRO stage, and activations.

- Model states (Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054 s3.1): mixed-precision Adam
  keeps 2 bytes of bf16/fp16 weights + 2 of gradients + K = 12 of fp32 optimizer state
  (master weights, momentum, variance) = 16 bytes per parameter. Tensor and pipeline
  parallelism divide them first (each GPU holds its slice of the layers); the ZeRO stage then
  divides by the data-parallel degree N: stage 0 (DDP) nothing, 1 the optimizer state
  (4 + 12/N), 2 also the gradients (2 + 14/N), 3 (FSDP FULL_SHARD) everything (16/N).
- Activations (Korthikanti et al. 2022, arXiv:2205.05198 s4): per layer
  34 x s x b x h / TP bytes with selective recomputation (sequence parallelism assumed),
  2 x s x b x h / TP with full recomputation, s x b x h x (34 + 5 a s / h) / TP without;
  context parallelism divides s. With 1F1B pipelining the first stage holds as many
  micro-batches as there are stages, so one GPU holds the activations of all the layers
  (the paper's equation 5).
Buffers, fragmentation and the CUDA context are left out: a lower bound.

The ZeRO stage a framework runs when the blueprint declares none is data with its source
(spec/data/framework_zero_stage.yaml): pytorch_ddp 0, pytorch_fsdp 3 (FULL_SHARD), deepspeed
0, megatron 0, nemo 1 (the recipes' distributed optimizer), the others 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data

STATE_BYTES_PER_PARAM = 16.0


@dataclass(frozen=True, slots=True)
class DefaultStage:
    """The stage a framework runs when its configuration sets none."""

    stage: int
    fixed: bool  # the framework's design (DDP, FSDP), not a setting of its own config
    source: str


@cache
def default_stages() -> dict[str, DefaultStage]:
    """The bundled framework defaults (spec/data/framework_zero_stage.yaml)."""
    data: dict[str, Any] = load_data("framework_zero_stage.yaml")
    return {
        str(name): DefaultStage(int(row["stage"]), bool(row["fixed"]), str(row["source"]))
        for name, row in data["frameworks"].items()
    }


def default_stage(framework: str) -> DefaultStage:
    """The framework's default stage (plain data parallelism for one the table lacks)."""
    return default_stages().get(framework, DefaultStage(0, False, "plain data parallelism"))


def zero_stage(framework: str, declared: int | None) -> int:
    """The declared stage, else the framework's default."""
    return declared if declared is not None else default_stage(framework).stage


def model_state_bytes(params: float, stage: int, model_parallel: int, dp: int) -> float:
    """Mixed-precision Adam model states per GPU (ZeRO paper, s3.1: K = 12)."""
    per = params / model_parallel
    match stage:
        case 0:
            return STATE_BYTES_PER_PARAM * per
        case 1:
            return (4 + 12 / dp) * per
        case 2:
            return (2 + 14 / dp) * per
        case _:
            return STATE_BYTES_PER_PARAM * per / dp


def activation_bytes(
    layers: int,
    hidden: int,
    heads: int | None,
    seq: int,
    mbs: int,
    tp: int,
    recompute: str,
    cp: int = 1,
) -> float:
    """Activations of all layers on one GPU (Korthikanti et al. 2022, s4)."""
    s = seq / cp
    sbh = s * mbs * hidden
    if recompute == "full":
        per_layer = 2.0 * sbh
    elif recompute == "selective" or heads is None:
        per_layer = 34 * sbh
    else:
        per_layer = sbh * (34 + 5 * heads * s / hidden)
    return layers * per_layer / tp


@dataclass(frozen=True, slots=True)
class Memory:
    """Bytes one GPU holds."""

    stage: int
    states: float
    activations: float
    gpu_bytes: float
    recompute: str = ""  # how the activations were counted

    @property
    def total(self) -> float:
        """States plus activations."""
        return self.states + self.activations

    @property
    def fits(self) -> bool:
        """Whether the lower bound fits the GPU's memory."""
        return self.total <= self.gpu_bytes

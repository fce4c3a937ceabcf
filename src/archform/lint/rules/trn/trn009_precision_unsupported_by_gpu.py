"""Training or serving in a data type the GPUs cannot compute in.

## What it does
Reads the GPU of every node group of a TrainingCluster (and the GPU pool of an
InferenceFleet) from archform's catalog, which lists the data types each GPU architecture
computes in, with the architecture whitepaper as source, and flags:

- `training.precision: bf16` on GPUs before Ampere (V100 is Volta, T4 is Turing);
- `training.precision: fp8` on GPUs before Ada/Hopper (A100, A10G, V100, T4);
- `model.precision: bf16` of a fleet on GPUs before Ampere.

## Why is this bad?
BF16 tensor cores arrived with Ampere and FP8 ones with Ada and Hopper. PyTorch autocast to
bfloat16 on a V100 either fails or falls back to slow emulation, Transformer Engine refuses
FP8 below compute capability 8.9, and vLLM refuses to start a bfloat16 model on a GPU below
compute capability 8.0 ("Bfloat16 is only supported on GPUs with compute capability of at
least 8.0"; use `--dtype half`).

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 2
  gpu: {model: V100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 100}
training: {framework: pytorch_fsdp, precision: bf16}
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 2
  gpu: {model: V100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 100}
training: {framework: pytorch_fsdp, precision: fp16}
```

## References
- NVIDIA Volta architecture whitepaper (FP16 tensor cores only):
  https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf
- NVIDIA Ampere architecture whitepaper (BF16 and TF32 tensor cores):
  https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf
- NVIDIA Hopper architecture whitepaper (FP8 tensor cores):
  https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper
- NVIDIA Ada architecture whitepaper (FP8 tensor cores):
  https://images.nvidia.com/aem-dam/Solutions/Data-Center/l4/nvidia-ada-gpu-architecture-whitepaper-v2.1.pdf
- vLLM's bfloat16 check (`_check_if_gpu_supports_dtype`):
  https://github.com/vllm-project/vllm/blob/main/vllm/platforms/cuda.py
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.catalog import GpuInfo, load_catalog

FALLBACK = {"bf16": "fp16 (with loss scaling)", "fp8": "bf16"}


def _unsupported(gpu_model: str, precision: str) -> GpuInfo | None:
    """The GPU's catalog entry when it is known and lacks the data type."""
    info = load_catalog().gpu(gpu_model)
    if info is None or not info.precisions or info.supports(precision):
        return None
    return info


def _message(what: str, precision: str, info: GpuInfo) -> str:
    return (
        f"{what} {precision} on {info.name} ({info.architecture}), which computes in "
        f"{', '.join(info.precisions)}; threshold: {precision} needs "
        f"{'Ampere or newer' if precision == 'bf16' else 'Ada, Hopper or newer'} "
        f"({info.precisions_source})"
    )


@rule(code="TRN009", name="precision-unsupported-by-gpu", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """bf16 before Ampere, fp8 before Ada/Hopper (training); bf16 before Ampere (serving)."""
    for doc, tc in ctx.training():
        if tc.training is None or tc.training.precision not in FALLBACK:
            continue
        precision = tc.training.precision
        for group in tc.compute.groups:
            info = _unsupported(group.gpu.model, precision) if group.gpu else None
            if info is None:
                continue
            yield Hit(
                doc,
                ("training", "precision"),
                _message(f"node group {group.name!r} trains in", precision, info),
                f"use training.precision: {FALLBACK[precision]}, or GPUs that have "
                f"{precision} tensor cores",
                at=("training",),
            )
            break
    for doc, fleet in ctx.fleets():
        gpu = fleet.gpu_pool.gpu
        if fleet.model.precision != "bf16" or gpu is None:
            continue
        info = _unsupported(gpu.model, "bf16")
        if info is not None:
            yield Hit(
                doc,
                ("model", "precision"),
                _message("the fleet serves", "bf16", info),
                "serve in fp16 (vLLM --dtype half) or use Ampere or newer GPUs",
                at=("model",),
            )

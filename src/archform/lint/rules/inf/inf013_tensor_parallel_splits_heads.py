"""Tensor parallelism that does not divide the model's attention heads.

## What it does
Reads the attention-head and KV-head counts of the named model (`model.base` or a table
`model.name` of an InferenceFleet, `training.model` of a TrainingCluster) from archform's
open-model table and flags a tensor-parallel degree that does not divide them:

- serving: `server.tensor_parallel` must divide the attention heads, and the KV heads must be
  a multiple of it or it a multiple of them (vLLM replicates KV heads when TP exceeds them;
  an MLA model's one latent is replicated on every rank);
- training with Megatron-LM or NeMo: `training.tensor_parallel` must divide both the
  attention heads and the KV heads (query groups).

## Why is this bad?
Each tensor-parallel rank takes a whole number of heads. vLLM stops at start-up with "Total
number of attention heads (28) must be divisible by tensor parallel size (8)", and
Megatron-LM asserts that the heads and query groups divide by the tensor-parallel size.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1]}
model:
  name: qwen
  base: qwen2.5-7b
  source: "s3://models/qwen/"
server: {image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 8}
gpu_pool: {instance_type: p5.48xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1]}
model:
  name: qwen
  base: qwen2.5-7b
  source: "s3://models/qwen/"
server: {image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 4}
gpu_pool: {instance_type: p5.48xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}
```

## References
- vLLM's parallel-config check (`verify_with_parallel_config`):
  https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py
- Megatron-LM attention (query groups per tensor-parallel rank):
  https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/transformer/attention.py
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.open_models import OpenModel, open_model


def _divisors(n: int, limit: int) -> str:
    return ", ".join(str(d) for d in range(1, limit + 1) if n % d == 0)


def serving_problem(model: OpenModel, tp: int) -> str | None:
    """Why vLLM refuses this TP for the model, or None."""
    if model.attention_heads % tp:
        return f"{model.attention_heads} attention heads"
    if model.kv_lora_rank is None and model.kv_heads % tp and tp % model.kv_heads:
        return f"{model.kv_heads} KV heads (nor is TP a multiple of them)"
    return None


@rule(code="INF013", name="tensor-parallel-splits-heads", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """TP does not divide the named model's attention (or KV) heads."""
    for doc, fleet in ctx.fleets():
        known = open_model(fleet.model.base or fleet.model.name)
        tp = fleet.server.tensor_parallel
        problem = serving_problem(known, tp) if known else None
        if known is None or problem is None:
            continue
        yield Hit(
            doc,
            ("server", "tensor_parallel"),
            f"tensor_parallel {tp} does not divide {known.name}'s {problem}; threshold: "
            f"each rank takes whole heads ({known.source})",
            f"use a tensor_parallel that divides {known.attention_heads}: "
            f"{_divisors(known.attention_heads, 16)}",
            at=("server",),
        )
    for doc, tc in ctx.training():
        work = tc.training
        if work is None or work.model is None or work.framework not in ("megatron", "nemo"):
            continue
        known = open_model(work.model)
        tp = work.tensor_parallel
        if known is None or (known.attention_heads % tp == 0 and known.kv_heads % tp == 0):
            continue
        yield Hit(
            doc,
            ("training", "tensor_parallel"),
            f"tensor_parallel {tp} does not divide {known.name}'s {known.attention_heads} "
            f"attention heads and {known.kv_heads} query groups; threshold: each rank takes "
            f"whole heads ({known.source})",
            "use a tensor_parallel that divides both: "
            f"{_divisors(min(known.attention_heads, known.kv_heads), 16)}",
            at=("training",),
        )

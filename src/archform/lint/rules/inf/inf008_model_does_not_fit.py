"""The model's weights plus KV cache do not fit in a replica's GPU memory.

## What it does
Computes, with `archform.estimate.inference.memory_fit`, the memory one replica
(`server.tensor_parallel` GPUs) needs for the weights plus the KV cache of one sequence
of `model.max_context_tokens`, and flags it when that exceeds usable GPU memory x
tensor_parallel x `gpu_memory_utilization` (0.9, vLLM's default).

- weights = params x bytes per parameter (bf16 2, fp8/int8 1, int4 0.5);
- KV per token = 2 x layers x kv_heads x head_dim x bytes (declared shape, else the
  nearest public reference model by size);
- usable memory is what the CUDA runtime reports (L4: 22.49 GiB of "24 GB").

## Why is this bad?
vLLM refuses to start when `max_model_len x KV bytes per token` exceeds the KV budget, and
an engine that does start with a tiny budget serves one request at a time.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model:
  name: llama-3.1-70b
  params: 70e9
  max_context_tokens: 8192
  source: "s3://models/llama-70b/"
server:
  image: "vllm/vllm-openai:v0.6.3"
  tensor_parallel: 1
gpu_pool: {instance_type: p5.48xlarge, min_nodes_per_region: 2, max_nodes_per_region: 4}
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model:
  name: llama-3.1-70b
  params: 70e9
  max_context_tokens: 8192
  source: "s3://models/llama-70b/"
server:
  image: "vllm/vllm-openai:v0.6.3"
  tensor_parallel: 4
gpu_pool: {instance_type: p5.48xlarge, min_nodes_per_region: 2, max_nodes_per_region: 4}
```

## References
- vLLM issue 12330 (KV-cache memory sizing): https://github.com/vllm-project/vllm/issues/12330
- Kwon et al., "Efficient Memory Management for Large Language Model Serving with
  PagedAttention", SOSP 2023, arXiv:2309.06180
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from archform.estimate import defaults
from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule
from archform.spec.catalog import load_catalog

if TYPE_CHECKING:
    from archform.spec.models import InferenceFleet


class Inf008Options(Options):
    """Fraction of GPU memory the engine may use."""

    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] = defaults.DEFAULT_UTILIZATION


def larger_instance(fleet: InferenceFleet, utilization: float) -> tuple[str, int] | None:
    """A catalog instance type of the provider whose GPUs hold a replica at a dividing TP.

    The same GPU model first, then the fewest GPUs, less memory, name.
    """
    from archform.estimate import inference

    catalog = load_catalog()
    current = fleet.gpu_pool.gpu.model if fleet.gpu_pool.gpu else ""
    options: list[tuple[bool, int, float, str, int]] = []
    for info in catalog.instances.values():
        if info.provider != fleet.placement.provider or not info.gpu_model or not info.gpu_count:
            continue
        gpu = catalog.gpu(info.gpu_model)
        if gpu is None:
            continue
        usable = inference.usable_gib(gpu.name, gpu.memory_gib)
        for t in range(1, info.gpu_count + 1):
            if info.gpu_count % t:
                continue
            if inference.memory_fit_for(fleet.model, usable, t, utilization).fits:
                other = catalog.gpu(current) is not gpu
                options.append((other, t, gpu.memory_gib, info.name, t))
                break
    if not options:
        return None
    *_, name, tp = min(options)
    return name, tp


@rule(code="INF008", name="model-does-not-fit", severity="error", options=Inf008Options)
def check(ctx: RuleContext, options: Inf008Options) -> Iterator[Hit]:
    """Weights + KV(max context) > usable memory x TP x utilisation."""
    for doc, fleet in ctx.fleets():
        if fleet.gpu_pool.gpu is None:
            continue
        # the estimate models are imported only when a fleet is linted (start-up)
        from archform.estimate import inference

        fit = inference.memory_fit(fleet, utilization=options.gpu_memory_utilization)
        if fit.fits:
            continue
        tp = fleet.server.tensor_parallel
        shape = f" (shape of {fit.shape.assumed_from})" if fit.shape.assumed_from else ""
        per_node = fleet.gpu_pool.gpu.per_node
        # vLLM's tensor parallel stays inside one node: a TP that divides its GPUs.
        needed_tp = next(
            (
                t
                for t in range(1, per_node + 1)
                if per_node % t == 0
                and inference.memory_fit_for(
                    fleet.model, fit.usable_gib_per_gpu, t, options.gpu_memory_utilization
                ).fits
            ),
            None,
        )
        if needed_tp is not None:
            hint = f"set server.tensor_parallel: {needed_tp} (of the {per_node} GPUs per node)"
        else:
            bigger = larger_instance(fleet, options.gpu_memory_utilization)
            hint = (
                f"no tensor_parallel on {per_node} GPUs of {fleet.gpu_pool.instance_type} holds "
                + (
                    f"it; use {bigger[0]} with server.tensor_parallel: {bigger[1]}"
                    if bigger
                    else "it and no catalog instance type of the provider does; use a lower "
                    "precision or a shorter max_context_tokens"
                )
            )
        yield Hit(
            doc,
            ctx.first_written(doc, ("server", "tensor_parallel"), ("model", "max_context_tokens")),
            f"a replica needs {fit.needed_gib:.1f} GiB ({fit.weights_gib:.1f} GiB weights + "
            f"{fit.kv_gib_at_max_context:.1f} GiB KV for {fleet.model.max_context_tokens} tokens"
            f"{shape}); threshold: {fit.budget_gib:.1f} GiB = {fit.usable_gib_per_gpu:g} GiB x "
            f"TP {tp} x {options.gpu_memory_utilization:g}",
            hint,
            at=("server",),
        )

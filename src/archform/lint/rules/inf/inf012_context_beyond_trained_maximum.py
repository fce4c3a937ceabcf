"""The served context is longer than the model was trained for.

## What it does
Looks the served model up in archform's open-model table (`model.base`, or a `model.name`
that is a table name) and flags `model.max_context_tokens` above the model's trained
maximum, its config.json's `max_position_embeddings` (which already includes any RoPE
scaling the model ships with, e.g. Llama 3.1's 8K to 128K).

## Why is this bad?
vLLM derives `max_model_len` from `max_position_embeddings` and refuses to start when the
requested length is larger ("User-specified max_model_len ... is greater than the derived
max_model_len"), unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` is set, and then positions past the
trained range produce garbage or NaNs. Serving longer contexts needs a model trained (or
RoPE-scaled and tuned) for them.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1]}
model:
  name: chat
  base: llama-2-13b
  max_context_tokens: 32768
  source: "s3://models/chat/"
server: {image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 4}
gpu_pool: {instance_type: p5.48xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1]}
model:
  name: chat
  base: llama-3.1-8b
  max_context_tokens: 32768
  source: "s3://models/chat/"
server: {image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 4}
gpu_pool: {instance_type: p5.48xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}
```

## References
- vLLM's max_model_len check (`_get_and_verify_max_len`):
  https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py
- vLLM engine arguments (`--max-model-len`):
  https://docs.vllm.ai/en/latest/configuration/engine_args.html
- Llama 2's 4,096-token context: Touvron et al. 2023, https://arxiv.org/abs/2307.09288
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.open_models import OpenModel, open_model

if TYPE_CHECKING:
    from archform.spec.models import InferenceFleet


def served_model(fleet: InferenceFleet) -> OpenModel | None:
    """The table entry of the served model: its `base`, else a `name` that is a table name."""
    return open_model(fleet.model.base or fleet.model.name)


@rule(code="INF012", name="context-beyond-trained-maximum", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """max_context_tokens > the named model's max_position_embeddings."""
    for doc, fleet in ctx.fleets():
        known = served_model(fleet)
        if known is None or fleet.model.max_context_tokens <= known.max_context:
            continue
        rope = f", RoPE scaling {known.rope_scaling}" if known.rope_scaling else ""
        yield Hit(
            doc,
            ("model", "max_context_tokens"),
            f"max_context_tokens {fleet.model.max_context_tokens} is longer than "
            f"{known.name} was trained for; threshold: {known.max_context} "
            f"(max_position_embeddings{rope}, {known.source}); vLLM refuses a longer "
            "max_model_len",
            f"set max_context_tokens: {known.max_context} or less, or serve a model trained "
            "for the longer context",
            at=("model",),
        )

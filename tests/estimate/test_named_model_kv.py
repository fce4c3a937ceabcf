"""A named 405B served in FP8 keeps a BF16 KV cache, sized from its config.json (issue 22).

vLLM's kv_cache_dtype "auto" uses the model's dtype
(https://docs.vllm.ai/en/v0.8.5/serving/engine_args.html): 2 bytes per element. Llama 3.1
405B's config.json gives 126 layers, 8 KV heads, head_dim 128
(https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json).
"""

from __future__ import annotations

from archform.estimate import inference
from archform.spec import load_text
from archform.spec.models import InferenceFleet

FLEET = """\
version: 1
kind: InferenceFleet
name: big
placement: {provider: aws, regions: [us-east-1]}
model:
  name: llama-405b-fp8
  base: llama-3.1-405b
  precision: fp8
  max_context_tokens: 32768
  source: "s3://models/405b/"
server: {image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 8}
gpu_pool: {instance_type: p5.48xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}
"""


def test_fp8_405b_kv_cache_is_sized_at_the_model_dtype() -> None:
    (doc,) = load_text(FLEET, "big.yaml").documents
    assert isinstance(doc.model, InferenceFleet)
    fit = inference.memory_fit(doc.model)
    assert fit.shape.assumed_from is None  # the named model's own shape, not a neighbour's
    assert fit.kv_bytes_per_token == 2 * 126 * 8 * 128 * 2

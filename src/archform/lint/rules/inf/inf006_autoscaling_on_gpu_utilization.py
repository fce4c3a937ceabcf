"""Autoscaling an inference fleet on GPU utilisation.

## What it does
Flags `autoscaling.metric: gpu_utilization`.

## Why is this bad?
GPU utilisation (DCGM's GPU_UTIL) reads high as soon as one request is running: it
measures whether a kernel is active, not how much capacity is left, so the autoscaler
scales out on light load and cannot tell a saturated server from an idle one. Queue depth,
requests per second or KV-cache usage track load.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
autoscaling:
  metric: gpu_utilization
  target: 70
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
autoscaling:
  metric: queue_depth
  target: 8
```

## References
- dcgm-exporter issue 301 (GPU utilization is not a load signal for autoscaling):
  https://github.com/NVIDIA/dcgm-exporter/issues/301
- Yatai issue 500: https://github.com/bentoml/Yatai/issues/500
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="INF006", name="autoscaling-on-gpu-utilization", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Metric gpu_utilization."""
    for doc, fleet in ctx.fleets():
        if fleet.autoscaling and fleet.autoscaling.metric == "gpu_utilization":
            yield Hit(
                doc,
                ("autoscaling", "metric"),
                "autoscaling on gpu_utilization, which is high at a single request; expected "
                "queue_depth, requests_per_second or kv_cache_usage",
                "use metric: queue_depth (vLLM num_requests_waiting)",
            )

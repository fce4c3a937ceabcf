"""The fleet's maximum size cannot serve the declared peak at the p99 target.

## What it does
Estimates with `archform.estimate.inference.capacity` (Little's law) how many replicas
`traffic.peak_rps` needs at `traffic.p99_latency_ms` and flags the fleet when
`gpu_pool.max_nodes_per_region` cannot hold them, or when no concurrency meets the p99
target at all.

- prefill of `traffic.prompt_tokens_per_request` is compute-bound (2 x params FLOPs per
  prompt token), decode memory-bound (weights + KV read per step), with constants
  calibrated on published vLLM figures (bench/RESULTS-estimate.md); measured decode rates
  override the model (`knee_tokens_per_gpu` / `single_tokens_per_gpu`);
- a request of T tokens takes W(C) = T x decode step(C) + C x prefill at concurrency C
  (every slot turns over once per request), p99 = `p99_factor` x W;
- replicas = ceil(peak_rps / (C / W(C))), spread evenly over the regions.

## Why is this bad?
At the peak the autoscaler hits its ceiling, queues grow and time-to-first-token
explodes (beyond the knee throughput is flat while latency grows tenfold).

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool:
  instance_type: g6.xlarge
  min_nodes_per_region: 2
  max_nodes_per_region: 4
traffic: {peak_rps: 500, p99_latency_ms: 30000}
edge: {domain: api.example.com}
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool:
  instance_type: g6.xlarge
  min_nodes_per_region: 2
  max_nodes_per_region: 4
traffic: {peak_rps: 2, p99_latency_ms: 30000}
edge: {domain: api.example.com}
```

## References
- NVIDIA NIM for LLMs, benchmarking guide:
  https://docs.nvidia.com/nim/benchmarking/llm/latest/overview.html
- Kubernetes, Horizontal Pod Autoscaling:
  https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.estimate import defaults
from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule


class Inf009Options(Options):
    """Throughput assumptions of the capacity model."""

    knee_tokens_per_gpu: Annotated[float, Field(gt=0, le=1e7)] | None = None
    single_tokens_per_gpu: Annotated[float, Field(gt=0, le=1e7)] | None = None
    p99_factor: Annotated[float, Field(ge=1, le=100)] = defaults.P99_FACTOR
    knee_concurrency: Annotated[int, Field(ge=1, le=100_000)] = defaults.KNEE_CONCURRENCY


@rule(code="INF009", name="capacity-below-peak", severity="warning", options=Inf009Options)
def check(ctx: RuleContext, options: Inf009Options) -> Iterator[Hit]:
    """Max replicas vs replicas needed at the peak."""
    for doc, fleet in ctx.fleets():
        # the estimate models are imported only when a fleet is linted (start-up)
        from archform.estimate import inference

        cap = inference.capacity(
            fleet,
            knee_tokens_per_gpu=options.knee_tokens_per_gpu,
            single_tokens_per_gpu=options.single_tokens_per_gpu,
            p99_factor=options.p99_factor,
            knee_concurrency=options.knee_concurrency,
        )
        if cap is None or cap.enough or fleet.traffic is None:
            continue
        traffic = fleet.traffic
        basis = (
            f"{cap.gpu} at ~{cap.tokens_per_gpu_knee:.0f} tok/s per GPU at the knee "
            f"({cap.assumption})"
        )
        if not cap.meets_latency:
            yield Hit(
                doc,
                ("traffic", "p99_latency_ms"),
                f"even one request at a time takes ~{cap.p99_ms:.0f} ms at p99 for "
                f"{traffic.tokens_per_request} tokens; threshold: p99 {traffic.p99_latency_ms} ms"
                f" ({basis})",
                "raise tensor_parallel, use faster GPUs, or relax the p99 target",
            )
            continue
        yield Hit(
            doc,
            ("gpu_pool", "max_nodes_per_region"),
            f"peak {traffic.peak_rps:g} rps at p99 {traffic.p99_latency_ms} ms needs "
            f"{cap.replicas_needed_per_region} replicas per region "
            f"({cap.nodes_needed_per_region} nodes), but max_nodes_per_region "
            f"{cap.nodes_max_per_region} holds {cap.replicas_max_per_region}; estimate: "
            f"{cap.rps_per_replica:.2f} rps per replica at concurrency "
            f"{cap.concurrency_per_replica}, {basis}",
            f"set max_nodes_per_region: {cap.nodes_needed_per_region} or more",
        )

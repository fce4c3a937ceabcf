"""Inference sizing: weights + KV cache per replica, and replicas from traffic (Little's law).

The model, its constants and their sources:

Memory (one replica = `tensor_parallel` GPUs)
    weights      = params x bytes/param (bf16/fp16 2, fp8/int8 1, int4 0.5)
    KV per token = 2 (K and V) x layers x kv_heads x head_dim x KV bytes (2: vLLM's kv_cache_dtype
                   auto keeps the model's BF16/FP16 dtype, also for FP8-weight checkpoints),
                   using the GQA KV-head count, not the attention-head count.
    budget       = usable GPU memory x tensor_parallel x gpu_memory_utilization (vLLM default 0.9)
    KV capacity  = (budget - weights - runtime overhead) / KV per token
    Worked check: Llama-3.1-8B bf16 is 14.96 GiB of weights and 128 KiB/token; on one L4
    (22.49 GiB usable, utilisation 0.92, 0.83 GiB runtime) about 40k tokens of KV (kvplan's
    README example, https://pypi.org/project/kvplan/; weights also in vllm#12330).
    Usable memory is what the CUDA runtime reports as total, below the marketed size
    (L4: 22.49 GiB of "24 GB"); see USABLE_GIB.

Throughput and replicas (estimate/serving.py, calibrated in spec/data/serving_calibration.yaml)
    Prefill is compute-bound (2 x params x prompt tokens FLOPs at an achieved MFU), decode
    memory-bound (weights + KV read per step at an achieved fraction of HBM bandwidth, plus
    per-step and per-sequence overheads); the constants are fitted on published vLLM figures
    and bench/estimate_calibration.py reports the error per figure. In a closed loop at
    concurrency C every slot turns over once per request, so a request of P prompt and T
    generated tokens takes W(C) = T x t_step(C) + C x t_prefill. The p99 is taken as
    p99_factor (1.5) x W. The largest C that meets the p99 target is used, up to what
    continuous batching runs: vLLM's max_num_seqs (256) and the sequences whose whole prompt
    + answer fit the KV cache (with measured overrides: the knee, 32); Little's law
    (L = lambda x W) then gives requests/s per replica = C / W(C), and
    replicas = ceil(peak_rps / (C / W(C))), spread evenly over the regions.
    Measured figures override the decode rates (`--tokens-per-gpu`, lint options): then
    W(C) = T x max(C / knee, 1 / single) + C x t_prefill.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from archform.estimate import serving
from archform.estimate.defaults import DEFAULT_UTILIZATION as DEFAULT_UTILIZATION
from archform.estimate.defaults import KNEE_CONCURRENCY as KNEE_CONCURRENCY
from archform.estimate.defaults import P99_FACTOR as P99_FACTOR
from archform.spec.catalog import load_catalog
from archform.spec.models.inference import InferenceFleet, ServedModel

GIB = 1024**3
BYTES_PER_PARAM = serving.BYTES_PER_PARAM
KV_BYTES = serving.KV_BYTES
RUNTIME_OVERHEAD_GIB = 0.83  # CUDA context, activations, graphs (kvplan worked example)
# vLLM's scheduler limit on running sequences (--max-num-seqs, default 256:
# https://docs.vllm.ai/en/v0.8.5/serving/engine_args.html).
MAX_NUM_SEQS = 256

# Total memory the CUDA runtime reports (nvidia-smi "Total" MiB / 1024). L4 from the kvplan
# worked example; the others are nvidia-smi totals, unverified here. Fallback: 0.93 x marketed.
USABLE_GIB = {
    "L4": 22.49,
    "A10": 22.49,
    "A10G": 22.49,
    "T4": 15.0,
    "L40S": 44.99,
    "A100": 80.0,
    "A100-40GB": 40.0,
    "H100": 79.65,
    "H100-NVL": 93.58,
    "H200": 140.4,
}

# Public configs of common dense models: (params, layers, kv_heads, head_dim).
REFERENCE_SHAPES: dict[str, tuple[float, int, int, int]] = {
    "llama-3.2-1b": (1.24e9, 16, 8, 64),
    "llama-3.2-3b": (3.21e9, 28, 8, 128),
    "llama-3.1-8b": (8.03e9, 32, 8, 128),
    "llama-2-13b": (13.0e9, 40, 40, 128),
    "llama-3.1-70b": (70.6e9, 80, 8, 128),
    "llama-3.1-405b": (405e9, 126, 8, 128),
}


@dataclass(frozen=True, slots=True)
class ModelShape:
    """Transformer dimensions that size the KV cache."""

    layers: int
    kv_heads: int
    head_dim: int
    assumed_from: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryFit:
    """Memory of one replica."""

    shape: ModelShape
    weights_gib: float
    kv_bytes_per_token: int
    kv_gib_at_max_context: float
    usable_gib_per_gpu: float
    budget_gib: float
    free_for_kv_gib: float
    max_kv_tokens: int
    needed_gib: float
    fits: bool


@dataclass(frozen=True, slots=True)
class Capacity:
    """Replicas needed for the peak, against what the pool can reach."""

    gpu: str
    tokens_per_gpu_knee: float  # decode tok/s per GPU at the knee concurrency
    tokens_per_gpu_single: float  # one stream's decode tok/s divided by its replica's GPUs
    tokens_per_replica_knee: float  # decode tok/s of one replica (all streams) at the knee
    tokens_per_stream: float  # decode tok/s one stream sees: a stream runs on the whole replica
    assumption: str
    replica_gpus: int
    prompt_tokens: int
    prefill_ms: float  # one prompt on one replica
    ttft_ms: float
    decode_bound: str
    concurrency_per_replica: int
    latency_ms: float
    p99_ms: float
    meets_latency: bool
    rps_per_replica: float
    replicas_needed_total: int
    replicas_needed_per_region: int
    nodes_needed_per_region: int
    nodes_max_per_region: int
    replicas_max_per_region: int
    enough: bool


def model_shape(model: ServedModel) -> ModelShape:
    """The model's shape: as declared, else the nearest reference model by size."""
    if model.layers and model.kv_heads and model.head_dim:
        return ModelShape(model.layers, model.kv_heads, model.head_dim)
    name, (_, layers, kv_heads, head_dim) = min(
        REFERENCE_SHAPES.items(), key=lambda kv: abs(math.log(kv[1][0] / model.params))
    )
    return ModelShape(
        model.layers or layers, model.kv_heads or kv_heads, model.head_dim or head_dim, name
    )


def weights_gib(params: float, precision: str) -> float:
    """Weight memory in GiB."""
    return params * BYTES_PER_PARAM[precision] / GIB


def kv_bytes_per_token(shape: ModelShape, precision: str) -> int:
    """KV-cache bytes per token (all layers, K and V)."""
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * KV_BYTES[precision]


def usable_gib(gpu_model: str, marketed_gib: float | None) -> float:
    """Memory the runtime can use per GPU."""
    if gpu_model in USABLE_GIB:
        return USABLE_GIB[gpu_model]
    if marketed_gib is None:
        info = load_catalog().gpu(gpu_model)
        marketed_gib = info.memory_gib if info else 0.0
    return round(marketed_gib * 0.93, 2)


def memory_fit(
    fleet: InferenceFleet,
    utilization: float = DEFAULT_UTILIZATION,
    overhead_gib: float = RUNTIME_OVERHEAD_GIB,
) -> MemoryFit:
    """Does one replica hold the weights plus the KV cache of one max-context sequence?"""
    gpu = fleet.gpu_pool.gpu
    model_name = gpu.model if gpu else "unknown"
    usable = usable_gib(model_name, gpu.memory_gib if gpu else None)
    return memory_fit_for(
        fleet.model, usable, fleet.server.tensor_parallel, utilization, overhead_gib
    )


def memory_fit_for(
    model: ServedModel,
    usable_gib_per_gpu: float,
    tensor_parallel: int,
    utilization: float = DEFAULT_UTILIZATION,
    overhead_gib: float = RUNTIME_OVERHEAD_GIB,
) -> MemoryFit:
    """Memory fit for explicit hardware (used by the worked examples)."""
    shape = model_shape(model)
    weights = weights_gib(model.params, model.precision)
    per_token = kv_bytes_per_token(shape, model.precision)
    kv_max = model.max_context_tokens * per_token / GIB
    budget = usable_gib_per_gpu * tensor_parallel * utilization
    free = budget - weights - overhead_gib * tensor_parallel
    tokens = max(0, int(free * GIB // per_token))
    needed = weights + kv_max
    return MemoryFit(
        shape=shape,
        weights_gib=weights,
        kv_bytes_per_token=per_token,
        kv_gib_at_max_context=kv_max,
        usable_gib_per_gpu=usable_gib_per_gpu,
        budget_gib=budget,
        free_for_kv_gib=free,
        max_kv_tokens=tokens,
        needed_gib=needed,
        fits=needed <= budget,
    )


def _hardware(gpu_name: str) -> tuple[serving.Hardware, str]:
    """Rates of the GPU, or half an A100-40GB when the calibration does not know it."""
    hw = serving.hardware(gpu_name)
    if hw is not None:
        return hw, "prefill/decode model calibrated on published vLLM figures"
    ref = serving.hardware("A100-40GB")
    assert ref is not None
    half = serving.Hardware(gpu_name, ref.hbm_gbs / 2, ref.dense_tflops / 2, ref.source)
    return half, f"unknown GPU {gpu_name}: half an A100-40GB assumed"


def capacity(
    fleet: InferenceFleet,
    *,
    knee_tokens_per_gpu: float | None = None,
    single_tokens_per_gpu: float | None = None,
    p99_factor: float = P99_FACTOR,
    knee_concurrency: int = KNEE_CONCURRENCY,
) -> Capacity | None:
    """Replicas needed for traffic.peak_rps at traffic.p99_latency_ms; None without traffic."""
    traffic = fleet.traffic
    if traffic is None:
        return None
    gpu = fleet.gpu_pool.gpu
    gpu_name = gpu.model if gpu else "unknown"
    per_node = gpu.per_node if gpu else 1
    tp = fleet.server.tensor_parallel
    hw, source = _hardware(gpu_name)
    shape = model_shape(fleet.model)
    precision = fleet.model.precision

    def timing(c: int) -> serving.Timing:
        return serving.timing(
            hw,
            serving.Workload(
                params=fleet.model.params,
                precision=precision,
                kv_bytes_per_token=kv_bytes_per_token(shape, precision),
                tensor_parallel=tp,
                prompt_tokens=traffic.prompt_tokens_per_request,
                output_tokens=traffic.tokens_per_request,
                concurrency=c,
            ),
        )

    at_knee, alone = timing(knee_concurrency), timing(1)
    knee = knee_tokens_per_gpu or knee_concurrency / at_knee.step_s / tp
    single = single_tokens_per_gpu or alone.decode_tps / tp
    overridden = knee_tokens_per_gpu is not None or single_tokens_per_gpu is not None
    if overridden:
        source = "overridden"
    tokens = traffic.tokens_per_request
    target_s = traffic.p99_latency_ms / 1000.0

    def latency(c: int) -> float:
        t = timing(c)
        if overridden:
            return tokens * max(c / (knee * tp), 1.0 / (single * tp)) + c * t.prefill_s
        return t.e2e_s

    # Continuous batching runs as many sequences as the scheduler (max_num_seqs) and the KV
    # cache (whole prompt + answer per sequence) allow, not only up to the knee; with
    # measured overrides the knee stays the limit.
    fit = memory_fit(fleet)
    per_seq = max(1, traffic.prompt_tokens_per_request + traffic.tokens_per_request)
    kv_limit = max(1, fit.max_kv_tokens // per_seq)
    limit = knee_concurrency if overridden else min(MAX_NUM_SEQS, kv_limit)
    concurrency = 1
    for c in range(limit, 0, -1):
        if latency(c) * p99_factor <= target_s:
            concurrency = c
            break
    w = latency(concurrency)
    meets = w * p99_factor <= target_s
    rps_replica = concurrency / w
    regions = len(fleet.placement.all_regions)
    needed_total = math.ceil(traffic.peak_rps / rps_replica)
    needed_region = math.ceil(needed_total / regions)
    replicas_per_node = max(1, per_node // tp)
    nodes_needed = math.ceil(needed_region / replicas_per_node)
    nodes_max = fleet.gpu_pool.max_nodes_per_region
    replicas_max = nodes_max * per_node // tp
    chosen = timing(concurrency)
    return Capacity(
        gpu=gpu_name,
        tokens_per_gpu_knee=knee,
        tokens_per_gpu_single=single,
        tokens_per_replica_knee=knee * tp,
        tokens_per_stream=single * tp,
        assumption=source,
        replica_gpus=tp,
        prompt_tokens=traffic.prompt_tokens_per_request,
        prefill_ms=chosen.prefill_s * 1000.0,
        ttft_ms=chosen.ttft_s * 1000.0,
        decode_bound=chosen.bound,
        concurrency_per_replica=concurrency,
        latency_ms=w * 1000.0,
        p99_ms=w * p99_factor * 1000.0,
        meets_latency=meets,
        rps_per_replica=rps_replica,
        replicas_needed_total=needed_total,
        replicas_needed_per_region=needed_region,
        nodes_needed_per_region=nodes_needed,
        nodes_max_per_region=nodes_max,
        replicas_max_per_region=replicas_max,
        enough=meets and needed_region <= replicas_max,
    )

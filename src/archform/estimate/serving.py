"""Prefill and decode, modelled separately and calibrated on published benchmark figures.

Prefill is compute-bound: a prompt of P tokens costs 2 x params x P FLOPs at the achieved
fraction `mfu` of the replica's dense tensor rate. Decode is memory-bound: every step reads
the weights plus the KV cache of the running sequences at the achieved fraction `mbu` of HBM
bandwidth (or, at large batches, is bound by 2 x params FLOPs per token), plus a per-step
and a per-sequence overhead. The hardware rates, the published figures and the fitted
constants live in spec/data/serving_calibration.yaml with their sources;
bench/estimate_calibration.py refits the constants and reports the error per figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.catalog import load_catalog
from archform.spec.datafile import load_data

BYTES_PER_PARAM = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
# KV-cache bytes per element as vLLM stores them by default: kv_cache_dtype "auto" uses the
# model's data type (https://docs.vllm.ai/en/v0.8.5/serving/engine_args.html), which for FP8,
# INT8 and INT4 weight-quantised checkpoints is still BF16/FP16 (2 bytes).
KV_BYTES = {"bf16": 2, "fp16": 2, "fp8": 2, "int8": 2, "int4": 2}
# Tensor-rate multiplier over BF16 for the weight precision (FP8/INT8 tensor cores run at
# twice the BF16 rate on Hopper/Ada/Ampere datasheets; int4 weights are dequantised to BF16).
FLOPS_FACTOR = {"bf16": 1.0, "fp16": 1.0, "fp8": 2.0, "int8": 2.0, "int4": 1.0}


@dataclass(frozen=True, slots=True)
class Constants:
    """The fitted constants of the model."""

    mbu: float
    mfu: float
    step_overhead_ms: float
    per_sequence_ms: float


@dataclass(frozen=True, slots=True)
class Hardware:
    """Rates of one GPU."""

    name: str
    hbm_gbs: float
    dense_tflops: float
    source: str


@dataclass(frozen=True, slots=True)
class Workload:
    """One model on one replica under one load."""

    params: float
    precision: str
    kv_bytes_per_token: int
    tensor_parallel: int
    prompt_tokens: float
    output_tokens: float
    concurrency: int


@dataclass(frozen=True, slots=True)
class Point:
    """One published figure."""

    id: str
    source: str
    engine: str
    gpu: str
    model: str
    workload: Workload
    metric: str  # output_tps | decode_tps | ttft_ms | burst_output_tps
    value: float
    fit: bool
    input_lens: tuple[int, ...] = ()
    output_lens: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Calibration:
    """The whole calibration file."""

    constants: Constants
    hardware: dict[str, Hardware]
    points: list[Point]


def kv_bytes(layers: int, kv_heads: int, head_dim: int, precision: str) -> int:
    """KV-cache bytes per token (all layers, K and V)."""
    return 2 * layers * kv_heads * head_dim * KV_BYTES[precision]


@cache
def load_calibration() -> Calibration:
    """Load the bundled calibration once."""
    data: dict[str, Any] = load_data("serving_calibration.yaml")
    catalog = load_catalog()
    hardware: dict[str, Hardware] = {}
    for name, row in data["gpus"].items():
        info = catalog.gpu(str(name))
        tflops = row.get("dense_tflops", info.bf16_dense_tflops if info else None)
        if tflops is None:
            raise ValueError(f"serving_calibration.yaml: no tensor rate for {name}")
        hardware[str(name)] = Hardware(
            str(name), float(row["hbm_gbs"]), float(tflops), str(row["source"])
        )
    points = []
    for row in data["points"]:
        m = row["model"]
        points.append(
            Point(
                id=str(row["id"]),
                source=str(row["source"]),
                engine=str(row["engine"]),
                gpu=str(row["gpu"]),
                model=str(m["name"]),
                workload=Workload(
                    params=float(m["params"]),
                    precision=str(m["precision"]),
                    kv_bytes_per_token=kv_bytes(
                        int(m["layers"]), int(m["kv_heads"]), int(m["head_dim"]), m["precision"]
                    ),
                    tensor_parallel=int(row["tp"]),
                    prompt_tokens=float(row["prompt_tokens"]),
                    output_tokens=float(row["output_tokens"]),
                    concurrency=int(row["concurrency"]),
                ),
                metric=str(row["metric"]),
                value=float(row["value"]),
                fit=bool(row["fit"]),
                input_lens=tuple(int(x) for x in row.get("input_lens", [])),
                output_lens=tuple(int(x) for x in row.get("output_lens", [])),
            )
        )
    f = data["fitted"]
    constants = Constants(
        float(f["mbu"]), float(f["mfu"]), float(f["step_overhead_ms"]), float(f["per_sequence_ms"])
    )
    return Calibration(constants, hardware, points)


def hardware(gpu: str) -> Hardware | None:
    """Rates of a GPU: the calibration's bandwidth, the catalog's tensor rate."""
    cal = load_calibration()
    if gpu in cal.hardware:
        return cal.hardware[gpu]
    info = load_catalog().gpu(gpu)
    if info is not None and info.name in cal.hardware:
        return cal.hardware[info.name]
    return None


@dataclass(frozen=True, slots=True)
class Timing:
    """What one replica does under a workload."""

    prefill_s: float  # one prompt
    step_s: float  # one decode step with `concurrency` sequences
    e2e_s: float  # one request, closed loop at `concurrency`
    ttft_s: float
    output_tps: float  # generated tokens per second of the replica
    decode_tps: float  # tokens per second of one stream while decoding
    bound: str  # "memory" or "compute" (decode)


def timing(hw: Hardware, w: Workload, c: Constants | None = None) -> Timing:
    """Prefill, decode step, end-to-end latency and throughput of one replica."""
    k = c or load_calibration().constants
    tp = w.tensor_parallel
    flops = hw.dense_tflops * 1e12 * FLOPS_FACTOR[w.precision] * tp * k.mfu
    bandwidth = hw.hbm_gbs * 1e9 * tp * k.mbu
    weight_bytes = w.params * BYTES_PER_PARAM[w.precision]
    context = w.prompt_tokens + w.output_tokens / 2
    b = w.concurrency
    memory_s = (weight_bytes + b * w.kv_bytes_per_token * context) / bandwidth
    compute_s = 2 * w.params * b / flops
    step = max(memory_s, compute_s) + (k.step_overhead_ms + k.per_sequence_ms * b) / 1000
    prefill = 2 * w.params * w.prompt_tokens / flops
    e2e = w.output_tokens * step + b * prefill
    return Timing(
        prefill_s=prefill,
        step_s=step,
        e2e_s=e2e,
        ttft_s=prefill + step,
        output_tps=b * w.output_tokens / e2e,
        decode_tps=1.0 / step,
        bound="memory" if memory_s >= compute_s else "compute",
    )


def burst_output_tps(
    hw: Hardware,
    w: Workload,
    input_lens: tuple[int, ...],
    output_lens: tuple[int, ...],
    c: Constants | None = None,
) -> float:
    """Generated tokens/s of a burst of requests sent at once.

    As vLLM's benchmark_serving with request_rate inf: one prefill of every prompt, then one
    decode step per position with the requests still generating (each step as in `timing`).
    """
    k = c or load_calibration().constants
    tp = w.tensor_parallel
    flops = hw.dense_tflops * 1e12 * FLOPS_FACTOR[w.precision] * tp * k.mfu
    bandwidth = hw.hbm_gbs * 1e9 * tp * k.mbu
    weight_bytes = w.params * BYTES_PER_PARAM[w.precision]
    seconds = 2 * w.params * sum(input_lens) / flops
    for pos in range(1, max(output_lens, default=0) + 1):
        running = [i for i, n in zip(input_lens, output_lens, strict=True) if n >= pos]
        kv = w.kv_bytes_per_token * sum(i + pos for i in running)
        memory_s = (weight_bytes + kv) / bandwidth
        compute_s = 2 * w.params * len(running) / flops
        seconds += max(memory_s, compute_s)
        seconds += (k.step_overhead_ms + k.per_sequence_ms * len(running)) / 1000
    return sum(output_lens) / seconds


def predict(point: Point, c: Constants | None = None) -> float:
    """The model's value for a published figure's metric."""
    hw = hardware(point.gpu)
    if hw is None:
        raise ValueError(f"no hardware rates for {point.gpu}")
    if point.metric == "burst_output_tps":
        return burst_output_tps(hw, point.workload, point.input_lens, point.output_lens, c)
    t = timing(hw, point.workload, c)
    if point.metric == "output_tps":
        return t.output_tps
    if point.metric == "decode_tps":
        return t.decode_tps
    if point.metric == "ttft_ms":
        return t.ttft_s * 1000
    raise ValueError(f"unknown metric {point.metric}")


def loss(points: list[Point], c: Constants) -> float:
    """Sum of squared log errors over the points marked `fit` (what the constants minimise)."""
    import math

    return sum(math.log(predict(p, c) / p.value) ** 2 for p in points if p.fit)

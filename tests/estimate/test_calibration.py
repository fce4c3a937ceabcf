"""The prefill/decode model against the published figures it is calibrated on.

Expected values are the published benchmark figures recorded (with their URLs) in
spec/data/serving_calibration.yaml; bench/estimate_calibration.py prints the same table.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from archform.estimate import inference, serving
from archform.spec import InferenceFleet, load_paths
from support import BLUEPRINTS

CAL = serving.load_calibration()
FITTED = [p for p in CAL.points if p.fit]


@pytest.mark.parametrize("point", FITTED, ids=[p.id for p in FITTED])
def test_fitted_figures_are_within_30_percent(point: serving.Point) -> None:
    estimate = serving.predict(point)
    assert abs(math.log(estimate / point.value)) <= math.log(1.3), (
        f"{point.id}: estimate {estimate:.1f} vs published {point.value} ({point.source})"
    )


def test_out_of_family_figures_are_reported_not_fitted() -> None:
    nim = [p for p in CAL.points if not p.fit and "NIM" in p.engine]
    assert nim
    # Still within a factor of 1.5 of NVIDIA's published TensorRT-LLM figures.
    for p in nim:
        assert abs(math.log(serving.predict(p) / p.value)) <= math.log(1.5), p.id


def test_stored_constants_are_a_local_optimum_of_the_fit() -> None:
    stored = CAL.constants
    best = serving.loss(CAL.points, stored)
    steps = {"mbu": 0.02, "mfu": 0.05, "step_overhead_ms": 0.5, "per_sequence_ms": 0.05}
    for deltas in itertools.product((-1, 0, 1), repeat=len(steps)):
        changes = {
            name: max(0.0, getattr(stored, name) + d * step)
            for (name, step), d in zip(steps.items(), deltas, strict=True)
        }
        neighbour = dataclasses.replace(stored, **changes)
        if neighbour.mbu > 1 or neighbour.mfu > 1 or neighbour.mbu <= 0 or neighbour.mfu <= 0:
            continue
        assert serving.loss(CAL.points, neighbour) >= best - 1e-9, changes


def test_every_figure_and_rate_has_a_public_source() -> None:
    for p in CAL.points:
        assert p.source.startswith("https://"), p.id
        assert serving.hardware(p.gpu) is not None, p.gpu
    for hw in CAL.hardware.values():
        assert hw.source.startswith("https://") and hw.hbm_gbs > 0 and hw.dense_tflops > 0


def test_prefill_is_compute_bound_and_decode_memory_bound() -> None:
    a10, a100 = serving.hardware("A10"), serving.hardware("A100-40GB")
    assert a10 is not None and a100 is not None
    w = serving.Workload(8.03e9, "bf16", 128 * 1024, 1, 1024, 128, 1)
    t10, t100 = serving.timing(a10, w), serving.timing(a100, w)
    # Prefill follows the tensor rate (125 vs 312 TFLOPS), decode the bandwidth (600 vs 1555).
    assert t10.prefill_s / t100.prefill_s == pytest.approx(312 / 125, rel=1e-6)
    assert t10.bound == t100.bound == "memory"
    longer = serving.timing(a10, dataclasses.replace(w, prompt_tokens=2048))
    assert longer.prefill_s == pytest.approx(2 * t10.prefill_s)


def test_prompt_length_drives_replicas() -> None:
    doc = load_paths([BLUEPRINTS / "inference-3region-a10.yaml"]).of_kind(InferenceFleet)[0]
    fleet = doc.model
    assert isinstance(fleet, InferenceFleet) and fleet.traffic is not None
    short = inference.capacity(fleet)
    long_traffic = fleet.traffic.model_copy(update={"prompt_tokens_per_request": 2048})
    long = inference.capacity(fleet.model_copy(update={"traffic": long_traffic}))
    assert short is not None and long is not None
    assert long.prefill_ms == pytest.approx(short.prefill_ms * 8)
    assert long.replicas_needed_total > 2 * short.replicas_needed_total


def test_kv_cache_of_an_fp8_checkpoint_is_bf16_as_vllm_auto_keeps_it() -> None:
    # Issue 22: vLLM's kv_cache_dtype "auto" uses the model data type
    # (https://docs.vllm.ai/en/v0.8.5/serving/engine_args.html); an FP8-weight Llama-3.1-405B
    # (config.json: 126 layers, 8 KV heads, head_dim 128) keeps a BF16 cache:
    # 2 x 126 x 8 x 128 x 2 bytes = 516,096 bytes per token.
    assert serving.kv_bytes(126, 8, 128, "fp8") == 516_096
    assert serving.kv_bytes(126, 8, 128, "bf16") == 516_096


def test_serving_test_set_median_within_15_percent_and_none_off_by_2x() -> None:
    # Figures marked `fit: false` (Lambda's published vLLM bursts, NIM) are never fitted.
    cal = serving.load_calibration()
    test = [p for p in cal.points if not p.fit]
    assert len(test) >= 6 and all(p.source.startswith("https://") for p in test)
    ratios = [serving.predict(p) / p.value for p in test]
    errors = sorted(abs(r - 1) for r in ratios)
    median = (errors[(len(errors) - 1) // 2] + errors[len(errors) // 2]) / 2
    assert median <= 0.15
    assert all(0.5 <= r <= 2.0 for r in ratios)


def test_continuous_batching_goes_past_the_knee_up_to_kv_and_max_num_seqs() -> None:
    # Issue 22: the model stopped batching at the knee (32) and under-predicted throughput
    # with many requests in flight. The H100 fleet's p99 target allows more; the KV cache
    # (whole prompt + answer per sequence) and vLLM's max_num_seqs (256) bound it.
    [fleet] = [
        d.model
        for d in load_paths([BLUEPRINTS / "inference-h100-single-region.yaml"]).of_kind(
            InferenceFleet
        )
    ]
    cap = inference.capacity(fleet)
    assert cap is not None and fleet.traffic is not None
    per_seq = fleet.traffic.prompt_tokens_per_request + fleet.traffic.tokens_per_request
    kv_seqs = inference.memory_fit(fleet).max_kv_tokens // per_seq
    assert inference.KNEE_CONCURRENCY < cap.concurrency_per_replica <= min(256, kv_seqs)

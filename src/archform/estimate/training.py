"""Training step time, tokens/s per GPU and MFU of a model on a cluster, calibrated.

Inputs are plain records (`ModelShape`, `Parallelism`, `ClusterRates`) so the model can be fed
from a blueprint, a model-facts table or a benchmark row alike. [derived] marks this module's
own arithmetic from the cited sources.

FLOPs per token (the MFU convention of PaLM, arXiv:2204.02311 app. B, also torchtitan's and
the Llama 3 report's): model = 6 P + 12 L H S (L layers, H hidden, S sequence length).
Full activation recomputation runs the forward twice: hardware = model + 2 P + 4 L H S;
selective recomputation (attention only) is counted as free (Korthikanti et al.,
arXiv:2205.05198: ~2.7 % extra).

Step time = compute x (1 + bubble) + exposed tensor-parallel time + exposed data-parallel time
    compute   = tokens per GPU per step x hardware FLOPs per token / (peak x efficiency),
                efficiency = e_gpu x H / (H + h0): large GEMMs run nearer peak (Megatron's
                MFU grows with model width, arXiv:2104.04473 Table 1); e_gpu per GPU model
                and h0 are fitted (spec/data/training_calibration.yaml). precision fp8: the
                weight GEMMs (6 P) at the catalog's dense FP8 peak and attention (12 L H S) at
                the BF16 peak, both at the GPU's fitted `fp8_efficiency` (Transformer Engine
                runs the Linear layers in FP8, dot-product attention in BF16).
    bubble    = (PP - 1) / (micro-batches per replica x virtual stages v): 1F1B, interleaved
                when v > 1 (Narayanan et al. arXiv:2104.04473 s2.2).
    TP        = per layer and micro-batch 4 all-reduces of b x S/CP x H bf16 activations (6
                with full recomputation) over NVLink, 2(t-1)/t x bytes / busbw, not overlapped.
    DP        = data parallelism over GPUs / (TP x PP x CP), by ZeRO stage (arXiv:1910.02054
                s7): stage 0 all-reduces the P / (TP x PP) bf16 gradients; stages 1-2
                reduce-scatter them and all-gather the parameters (same volume, ring only);
                stage 3 (FSDP FULL_SHARD) all-gathers the parameters once more, in the forward
                pass (3 Psi, 1.5x). Each collective runs at the bus bandwidth of
                archform.estimate.nccl for the nodes it spans, shared by the data-parallel
                groups on a node, and hides behind its pass (forward 1/3 of compute, backward
                2/3) up to the fitted fraction `dp_overlap` of it.
    CP        = context parallelism splits each sequence; its K/V exchange is taken as hidden
                behind attention (assumption, Llama 3 report s3.3.2).
Tokens/s per GPU = global batch tokens / step / GPUs; MFU = tokens/s x model FLOPs per token /
peak. A figure above the GPUs' peak is flagged `impossible`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from archform.estimate import nccl, training_memory
from archform.spec.catalog import load_catalog
from archform.spec.datafile import load_data

GRAD_BYTES = 2.0  # bf16 gradients (fp32 runs: 4; not modelled separately)
ACT_BYTES = 2.0
# Single-node NVLink ring busbw when nccl_busbw.yaml has no measured figure: A100 NVLink 3
# is 300 GB/s per direction (NVIDIA A100 datasheet); 0.8 of it is assumed.   [assumption]
NVLINK_FALLBACK_GBYTES = {"A100": 240.0, "A100-40GB": 240.0}


@dataclass(frozen=True, slots=True)
class ModelShape:
    """Dense transformer dimensions."""

    params: float
    layers: int
    hidden: int


@dataclass(frozen=True, slots=True)
class Parallelism:
    """How the job is laid out."""

    framework: str
    gpus: int
    gpus_per_node: int
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    virtual_stages: int = 1
    micro_batch: int = 1
    sequence_length: int = 4096
    global_batch_tokens: float = 4e6
    recompute: str = "selective"  # none | selective | full
    context_parallel: int = 1
    zero_stage: int = 0
    precision: str = "bf16"  # bf16 | fp16 | fp8 (fp8: the Linear GEMMs, as Transformer Engine)


@dataclass(frozen=True, slots=True)
class ClusterRates:
    """What the hardware offers."""

    gpu: str
    peak_tflops: float
    nic_gbps_per_node: float
    fp8_peak_tflops: float = 0.0


@dataclass(frozen=True, slots=True)
class Constants:
    """The fitted constants."""

    efficiency: dict[str, float]
    h0: float
    dp_overlap: float
    fp8_efficiency: dict[str, float] = field(default_factory=dict)

    def gpu_efficiency(self, gpu: str) -> float:
        """e_gpu, or the lowest fitted one for a GPU the calibration does not cover."""
        return self.efficiency.get(gpu, min(self.efficiency.values()))

    def gpu_fp8_efficiency(self, gpu: str) -> float:
        """e_fp8 of the GPU, or the lowest fitted one for a GPU the calibration does not cover."""
        if not self.fp8_efficiency:
            return self.gpu_efficiency(gpu)
        return self.fp8_efficiency.get(gpu, min(self.fp8_efficiency.values()))


@dataclass(frozen=True, slots=True)
class Collective:
    """One data-parallel collective of a step."""

    name: str  # all-reduce | reduce-scatter | all-gather
    what: str  # gradients | parameters
    gbytes: float  # the tensor moved (full size, before the (n-1)/n of the ring)
    seconds: float
    overlaps: str  # forward | backward: the pass it can hide behind


@dataclass(frozen=True, slots=True)
class StepTime:
    """One optimizer step."""

    data_parallel: int
    micro_batches: int
    compute_s: float
    bubble_s: float
    tp_s: float
    dp_sync_s: float
    dp_exposed_s: float
    dp_busbw_gbytes: float
    dp_algorithm: str
    collectives: tuple[Collective, ...]
    step_s: float
    tokens_per_s_per_gpu: float
    model_flops_per_token: float
    mfu: float
    impossible: bool


def model_flops_per_token(shape: ModelShape, seq: int) -> float:
    """6 P + 12 L H S."""
    return 6.0 * shape.params + 12.0 * shape.layers * shape.hidden * seq


def hardware_flops_per_token(shape: ModelShape, seq: int, recompute: str) -> float:
    """Model FLOPs plus the recomputed forward pass."""
    gemm, attention = flops_split(shape, seq, recompute)
    return gemm + attention


def flops_split(shape: ModelShape, seq: int, recompute: str) -> tuple[float, float]:
    """(weight GEMM, attention score) hardware FLOPs per token.

    6 P and 12 L H S, each + 1/3 with full recomputation.
    """
    gemm = 6.0 * shape.params
    attention = 12.0 * shape.layers * shape.hidden * seq
    if recompute == "full":
        return gemm * 4 / 3, attention * 4 / 3
    return gemm, attention


def nvlink_gbytes(gpu: str) -> float:
    """Intra-node all-reduce busbw for tensor parallelism."""
    return nccl.intra_node_gbytes(gpu) or NVLINK_FALLBACK_GBYTES.get(gpu, 240.0)


def _dp_busbw(
    par: Parallelism, hw: ClusterRates, dp: int, algorithm: str | None
) -> tuple[float, str]:
    """Bus bandwidth one data-parallel group gets (GB/s) and NCCL's algorithm for it."""
    nodes = max(1, par.gpus // par.gpus_per_node)
    group_nodes = min(nodes, dp)
    if group_nodes <= 1:
        return nvlink_gbytes(hw.gpu), "NVLink"
    ranks_per_node = max(1, dp // group_nodes)
    bw = nccl.allreduce_busbw(
        group_nodes, ranks_per_node, hw.nic_gbps_per_node, hw.gpu, algorithm=algorithm
    )
    # The data-parallel groups of a node share its NICs.
    return bw.gbytes * ranks_per_node / par.gpus_per_node, bw.algorithm


def dp_collectives(
    shape: ModelShape, par: Parallelism, hw: ClusterRates, dp: int
) -> tuple[tuple[Collective, ...], float, str]:
    """The data-parallel collectives of one step by ZeRO stage (arXiv:1910.02054 s7).

    Stage 0 all-reduces the gradients (NCCL ring or tree). Stages 1 and 2 reduce-scatter the
    gradients and all-gather the updated parameters: the same 2 Psi volume, ring only (NCCL's
    tree is an all-reduce algorithm). Stage 3 all-gathers the parameters again before the
    backward pass (3 Psi, 1.5x); its forward all-gather hides behind the forward pass.
    Each moves (n-1)/n of the tensor per GPU at the bus bandwidth (nccl-tests' busbw).
    """
    if dp <= 1:
        return (), 0.0, "none"
    size = shape.params / (par.tensor_parallel * par.pipeline_parallel) * GRAD_BYTES
    half = (dp - 1) / dp * size
    if par.zero_stage == 0:
        busbw, algo = _dp_busbw(par, hw, dp, None)
        t = 2 * half / (busbw * 1e9)
        return (Collective("all-reduce", "gradients", size / 1e9, t, "backward"),), busbw, algo
    busbw, algo = _dp_busbw(par, hw, dp, "Ring")
    one = half / (busbw * 1e9)
    out = [
        Collective("reduce-scatter", "gradients", size / 1e9, one, "backward"),
        Collective("all-gather", "parameters", size / 1e9, one, "backward"),
    ]
    if par.zero_stage >= 3:
        out.append(Collective("all-gather", "parameters", size / 1e9, one, "forward"))
    return tuple(out), busbw, algo


def _compute_s(
    shape: ModelShape, par: Parallelism, hw: ClusterRates, c: Constants, tokens_per_gpu: float
) -> float:
    """FLOPs over peak x efficiency x H / (H + h0).

    An fp8 run (Transformer Engine) does its weight GEMMs at the FP8 peak and attention at the
    BF16 peak, both at the fitted fp8 efficiency of the GPU (one constant per GPU: what an fp8
    recipe achieves of each rate).
    """
    width = shape.hidden / (shape.hidden + c.h0)
    gemm, attention = flops_split(shape, par.sequence_length, par.recompute)
    if par.precision == "fp8" and hw.fp8_peak_tflops > 0:
        e8 = c.gpu_fp8_efficiency(hw.gpu) * width * 1e12
        return tokens_per_gpu * (
            gemm / (hw.fp8_peak_tflops * e8) + attention / (hw.peak_tflops * e8)
        )
    bf16 = hw.peak_tflops * 1e12 * c.gpu_efficiency(hw.gpu) * width
    return tokens_per_gpu * (gemm + attention) / bf16


def step_time(
    shape: ModelShape, par: Parallelism, hw: ClusterRates, k: Constants | None = None
) -> StepTime:
    """Compute, bubble and exposed communication of one step."""
    c = k or load_calibration().constants
    tp, pp, cp = par.tensor_parallel, par.pipeline_parallel, par.context_parallel
    dp = max(1, par.gpus // (tp * pp * cp))
    seq = par.sequence_length
    seqs = max(1.0, par.global_batch_tokens / seq)
    seqs_per_replica = seqs / dp
    micro = max(1, round(seqs_per_replica / par.micro_batch))
    tokens_per_gpu = par.global_batch_tokens / par.gpus
    compute = _compute_s(shape, par, hw, c, tokens_per_gpu)
    # Interleaved 1F1B with v model chunks per GPU: (p - 1) / (v m) (Narayanan et al. s2.2.2).
    bubble = compute * (pp - 1) / (micro * par.virtual_stages) if pp > 1 else 0.0
    tp_s = 0.0
    if tp > 1:
        per_layer = 6 if par.recompute == "full" else 4
        size = par.micro_batch * seq / cp * shape.hidden * ACT_BYTES
        one = 2 * (tp - 1) / tp * size / (nvlink_gbytes(hw.gpu) * 1e9)
        tp_s = micro * (shape.layers / pp) * per_layer * one
    collectives, busbw, algo = dp_collectives(shape, par, hw, dp)
    dp_sync = sum(x.seconds for x in collectives)
    # Each collective hides behind its pass (forward 1/3 of compute, backward 2/3), at most
    # the fitted fraction dp_overlap of it.
    passes = {"forward": compute / 3.0, "backward": compute * 2.0 / 3.0}
    dp_exposed = sum(
        max(0.0, sum(x.seconds for x in collectives if x.overlaps == name) - c.dp_overlap * t)
        for name, t in passes.items()
    )
    step = compute + bubble + tp_s + dp_exposed
    tps = par.global_batch_tokens / step / par.gpus
    mflops = model_flops_per_token(shape, seq)
    peak = hw.fp8_peak_tflops if par.precision == "fp8" and hw.fp8_peak_tflops else hw.peak_tflops
    mfu = tps * mflops / (peak * 1e12)
    return StepTime(
        data_parallel=dp,
        micro_batches=micro,
        compute_s=compute,
        bubble_s=bubble,
        tp_s=tp_s,
        dp_sync_s=dp_sync,
        dp_exposed_s=dp_exposed,
        dp_busbw_gbytes=round(busbw, 2),
        dp_algorithm=algo,
        collectives=collectives,
        step_s=step,
        tokens_per_s_per_gpu=tps,
        model_flops_per_token=mflops,
        mfu=mfu,
        impossible=mfu > 1.0,
    )


def implied_mfu(tokens_per_s: float, shape: ModelShape, seq: int, gpus: int, peak: float) -> float:
    """The MFU a claimed cluster throughput would need (above 1: beyond the GPUs' peak)."""
    return tokens_per_s * model_flops_per_token(shape, seq) / (gpus * peak * 1e12)


def peak_tflops(gpu: str) -> float:
    """Dense BF16 peak from the catalog (0 when the GPU has no BF16)."""
    info = load_catalog().gpu(gpu)
    return info.bf16_dense_tflops if info else 0.0


def fp8_peak_tflops(gpu: str) -> float:
    """Dense FP8 peak from the catalog (0 when the GPU has no FP8)."""
    info = load_catalog().gpu(gpu)
    return info.fp8_dense_tflops if info else 0.0


@dataclass(frozen=True, slots=True)
class Point:
    """One published training throughput figure."""

    id: str
    source: str
    framework_name: str
    shape: ModelShape
    par: Parallelism
    hw: ClusterRates
    metric: str  # tokens_per_s_per_gpu | mfu | megatron_tflops
    value: float
    vocab: int
    fit: bool


@dataclass(frozen=True, slots=True)
class Calibration:
    """The calibration file."""

    constants: Constants
    points: list[Point]


def _point(row: dict[str, Any]) -> Point:
    m, p = row["model"], row["parallelism"]
    gpu = str(row["gpu"])
    return Point(
        id=str(row["id"]),
        source=str(row["source"]),
        framework_name=str(row["framework_name"]),
        shape=ModelShape(float(m["params"]), int(m["layers"]), int(m["hidden"])),
        par=Parallelism(
            framework=str(p["framework"]),
            gpus=int(p["gpus"]),
            gpus_per_node=int(p.get("gpus_per_node", 8)),
            tensor_parallel=int(p.get("tp", 1)),
            pipeline_parallel=int(p.get("pp", 1)),
            virtual_stages=int(p.get("virtual_stages", 1)),
            micro_batch=int(p.get("micro_batch", 1)),
            sequence_length=int(p["seq"]),
            global_batch_tokens=float(p["global_batch_seqs"]) * int(p["seq"]),
            recompute=str(p["recompute"]),
            context_parallel=int(p.get("cp", 1)),
            zero_stage=training_memory.zero_stage(
                str(p["framework"]), None if p.get("zero_stage") is None else int(p["zero_stage"])
            ),
            precision=str(p.get("precision", "bf16")),
        ),
        hw=ClusterRates(
            gpu, peak_tflops(gpu), float(row["nic_gbps_per_node"]), fp8_peak_tflops(gpu)
        ),
        metric=str(row["metric"]),
        value=float(row["value"]),
        vocab=int(m.get("vocab", 0)),
        fit=bool(row["fit"]),
    )


@cache
def load_calibration() -> Calibration:
    """The bundled calibration (constants and published figures)."""
    data: dict[str, Any] = load_data("training_calibration.yaml")
    f = data["fitted"]
    constants = Constants(
        {str(g): float(v) for g, v in f["efficiency"].items()},
        float(f["h0"]),
        float(f["dp_overlap"]),
        {str(g): float(v) for g, v in (f.get("fp8_efficiency") or {}).items()},
    )
    return Calibration(constants, [_point(r) for r in data["points"]])


def megatron_flops_per_token(shape: ModelShape, seq: int, vocab: int) -> float:
    """Megatron's FLOPs per token with full recomputation (arXiv:2104.04473 s5.1).

    96 L H^2 (1 + S / 6H + V / 16 L H).
    """
    layers, h = shape.layers, shape.hidden
    return 96.0 * layers * h * h * (1 + seq / (6 * h) + vocab / (16 * layers * h))


def predict(point: Point, k: Constants | None = None) -> float:
    """The model's value for a published figure's metric."""
    t = step_time(point.shape, point.par, point.hw, k)
    if point.metric == "tokens_per_s_per_gpu":
        return t.tokens_per_s_per_gpu
    if point.metric == "mfu":
        return t.mfu
    if point.metric == "megatron_tflops":
        per_token = megatron_flops_per_token(point.shape, point.par.sequence_length, point.vocab)
        return t.tokens_per_s_per_gpu * per_token / 1e12
    raise ValueError(f"unknown metric {point.metric}")

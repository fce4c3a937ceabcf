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
                and h0 are fitted (spec/data/training_calibration.yaml).
    bubble    = (PP - 1) / (micro-batches per replica x virtual stages) (1F1B; Narayanan et
                al. s2.2).
    TP        = per layer and micro-batch 4 all-reduces of b x S x H bf16 activations (6 with
                full recomputation) over NVLink, 2(t-1)/t x bytes / busbw, not overlapped.
    DP        = gradient all-reduce of P / (TP x PP) bf16 values per GPU (x 1.5 for FSDP /
                ZeRO-3: arXiv:1910.02054 s7) at the bus bandwidth of archform.estimate.nccl for
                the nodes it spans, shared by the data-parallel groups on a node; it hides
                behind the backward pass (2/3 of compute) up to the fitted fraction
                `dp_overlap` of it: exposed = max(0, sync - dp_overlap x backward).
Tokens/s per GPU = global batch tokens / step / GPUs; MFU = tokens/s x model FLOPs per token /
peak. A figure above the GPUs' peak is flagged `impossible`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.estimate import nccl
from archform.spec.catalog import load_catalog
from archform.spec.datafile import load_data

GRAD_BYTES = 2.0  # bf16 gradients (fp32 runs: 4; not modelled separately)
ACT_BYTES = 2.0
FSDP_FACTOR = {"pytorch_fsdp": 1.5}
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


@dataclass(frozen=True, slots=True)
class ClusterRates:
    """What the hardware offers."""

    gpu: str
    peak_tflops: float
    nic_gbps_per_node: float


@dataclass(frozen=True, slots=True)
class Constants:
    """The fitted constants."""

    efficiency: dict[str, float]
    h0: float
    dp_overlap: float

    def gpu_efficiency(self, gpu: str) -> float:
        """e_gpu, or the lowest fitted one for a GPU the calibration does not cover."""
        return self.efficiency.get(gpu, min(self.efficiency.values()))


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
    extra = 2.0 * shape.params + 4.0 * shape.layers * shape.hidden * seq
    return model_flops_per_token(shape, seq) + (extra if recompute == "full" else 0.0)


def nvlink_gbytes(gpu: str) -> float:
    """Intra-node all-reduce busbw for tensor parallelism."""
    return nccl.intra_node_gbytes(gpu) or NVLINK_FALLBACK_GBYTES.get(gpu, 240.0)


def step_time(
    shape: ModelShape, par: Parallelism, hw: ClusterRates, k: Constants | None = None
) -> StepTime:
    """Compute, bubble and exposed communication of one step."""
    c = k or load_calibration().constants
    tp, pp = par.tensor_parallel, par.pipeline_parallel
    dp = max(1, par.gpus // (tp * pp))
    seq = par.sequence_length
    seqs = max(1.0, par.global_batch_tokens / seq)
    seqs_per_replica = seqs / dp
    micro = max(1, round(seqs_per_replica / par.micro_batch))
    tokens_per_gpu = par.global_batch_tokens / par.gpus
    eff = c.gpu_efficiency(hw.gpu) * shape.hidden / (shape.hidden + c.h0)
    hw_flops = hardware_flops_per_token(shape, seq, par.recompute)
    compute = tokens_per_gpu * hw_flops / (hw.peak_tflops * 1e12 * eff)
    bubble = compute * (pp - 1) / (micro * par.virtual_stages) if pp > 1 else 0.0
    tp_s = 0.0
    if tp > 1:
        per_layer = 6 if par.recompute == "full" else 4
        size = par.micro_batch * seq * shape.hidden * ACT_BYTES
        one = 2 * (tp - 1) / tp * size / (nvlink_gbytes(hw.gpu) * 1e9)
        tp_s = micro * (shape.layers / pp) * per_layer * one
    nodes = max(1, par.gpus // par.gpus_per_node)
    dp_sync = 0.0
    busbw, algo = 0.0, "none"
    if dp > 1:
        grad = shape.params / (tp * pp) * GRAD_BYTES * FSDP_FACTOR.get(par.framework, 1.0)
        group_nodes = min(nodes, dp)
        if group_nodes <= 1:
            bw = nccl.allreduce_busbw(1, par.gpus_per_node, hw.nic_gbps_per_node, hw.gpu)
            busbw, algo = nvlink_gbytes(hw.gpu), bw.algorithm
        else:
            ranks_per_node = max(1, dp // group_nodes)
            bw = nccl.allreduce_busbw(group_nodes, ranks_per_node, hw.nic_gbps_per_node, hw.gpu)
            share = ranks_per_node / par.gpus_per_node
            busbw, algo = bw.gbytes * share, bw.algorithm
        dp_sync = 2 * (dp - 1) / dp * grad / (busbw * 1e9)
    # Gradient sync overlaps the backward pass (2/3 of the compute), at most for its length.
    dp_exposed = max(0.0, dp_sync - c.dp_overlap * compute * 2.0 / 3.0)
    step = compute + bubble + tp_s + dp_exposed
    tps = par.global_batch_tokens / step / par.gpus
    mflops = model_flops_per_token(shape, seq)
    mfu = tps * mflops / (hw.peak_tflops * 1e12)
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
        ),
        hw=ClusterRates(gpu, peak_tflops(gpu), float(row["nic_gbps_per_node"])),
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

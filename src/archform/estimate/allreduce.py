"""Gradient synchronisation vs compute per training step: an alpha-beta ring model.

Used by lint rule NET008 and meant for later estimates. Every constant below is a default
that callers (and lint config) can override. Sources are cited inline; [derived] marks this
module's own arithmetic from those sources.

Communication (one optimizer step)
    Gradient bytes      S = P x bytes per gradient element (bf16/fp16/fp8 runs keep bf16
                        gradients: 2 bytes; fp32: 4).                                    [derived]
    Data-parallel volume: plain DP / DDP / ZeRO-1/2 move 2 Psi elements per step
                        (reduce-scatter + all-gather = one allreduce); ZeRO-3 / FSDP
                        full-shard moves 3 Psi = 1.5 x DP (Rajbhandari et al.,
                        arXiv:1910.02054 s7).
    Ring allreduce bytes per GPU = 2 (n-1)/n x S (github.com/NVIDIA/nccl-tests doc/PERFORMANCE.md).
    Bandwidth term      = volume factor x 2 (n-1)/n x S / busbw, where busbw is the node's
                        fabric bandwidth (gbps_per_node / 8) x BUS_EFFICIENCY for a ring,
                        or NCCL's tree at two nodes (archform.estimate.nccl: up to
                        2(N-1)/N x that, capped by the GPU's NVLink busbw). Multi-node
                        ring busbw tracks the per-node NIC aggregate: NDR "46-48 GB/s per
                        NIC" of 50 GB/s line rate, i.e. ~0.92-0.96 (NVIDIA/nccl-tests#290); 0.92
                        is used. Check: 70B bf16 = 140 GB of gradients at ~400 GB/s node
                        busbw is ~0.7 s unoverlapped.                          [derived]
    Latency term        = calls x 2 ceil(log2 nodes) x alpha. The ring's latency grows
                        linearly in n, but NCCL switches to trees/NVLS at scale, so a
                        log-depth latency is modelled (assumption). calls = volume /
                        bucket size (BUCKET_MIB, 256 MiB). alpha per fabric hop is an
                        order-of-magnitude assumption (ALPHA_US, unverified): IB 3 us,
                        RoCE 5 us, EFA 20 us, GPUDirect-TCPX(O) 20 us, TCP ethernet 50 us.
                        It is negligible next to the bandwidth term for large models.

Compute (one optimizer step)
    FLOPs = 6 x P x tokens per step (forward 2P + backward 4P per token; Kaplan et al. 2020).
    time  = FLOPs / (GPUs x dense bf16 TFLOPs x MFU). MFU (model FLOPs utilisation) 0.40 is
    a conservative large-run figure (PaLM reported 46 %, MegaScale 55 %; assumption).
    GPUs without BF16 (V100, T4: catalog value 0) give no estimate (None).

Exposure
    The framework overlaps gradient sync with the backward pass; what it cannot hide is
    exposed = sync x (1 - OVERLAP). OVERLAP 0.5 is an assumption (bucketed DDP/FSDP overlap
    well, but the last buckets and the first all-gathers are always exposed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from archform.estimate import nccl

#: Volume of gradient traffic relative to one allreduce of the gradients (TC s6).
VOLUME_FACTOR = {
    "pytorch_ddp": 1.0,
    "pytorch_fsdp": 1.5,
    "deepspeed": 1.0,  # ZeRO-1/2 (the usual DeepSpeed stages): no extra traffic
    "megatron": 1.0,  # distributed optimizer = ZeRO-1; TP/PP only shrink the DP volume
    "nemo": 1.0,
    "jax": 1.0,
    "horovod": 1.0,
    "custom_mpi": 1.0,
}
GRAD_BYTES = {"bf16": 2, "fp16": 2, "fp8": 2, "fp32": 4}
ALPHA_US = {
    "infiniband": 3.0,
    "roce": 5.0,
    "efa": 20.0,
    "gpudirect_tcpxo": 20.0,
    "gpudirect_tcpx": 20.0,
    "ethernet": 50.0,
}
BUS_EFFICIENCY = 0.92
BUCKET_MIB = 256.0
MFU = 0.40
OVERLAP = 0.5


@dataclass(frozen=True, slots=True)
class StepEstimate:
    """Communication and compute time of one optimizer step."""

    gpus: int
    nodes: int
    gradient_bytes: float
    volume_factor: float
    busbw_bytes_per_s: float
    bandwidth_s: float
    latency_s: float
    sync_s: float
    exposed_s: float
    compute_s: float

    @property
    def exposed_fraction(self) -> float:
        """Exposed sync time as a fraction of compute time."""
        return self.exposed_s / self.compute_s


def gradient_bytes(params: float, precision: str) -> float:
    """Bytes of one full gradient."""
    return params * GRAD_BYTES.get(precision, 2)


def ring_allreduce_seconds(
    size_bytes: float, ranks: int, busbw_bytes_per_s: float, alpha_s: float = 0.0, hops: int = 0
) -> float:
    """Alpha-beta time of one allreduce of `size_bytes` over `ranks` ranks."""
    if ranks <= 1:
        return 0.0
    return 2 * (ranks - 1) / ranks * size_bytes / busbw_bytes_per_s + 2 * hops * alpha_s


def compute_seconds(
    params: float, tokens: float, gpus: int, tflops: float, mfu: float = MFU
) -> float:
    """Time of 6 P x tokens FLOPs on `gpus` GPUs at `tflops` dense x MFU."""
    return 6.0 * params * tokens / (gpus * tflops * 1e12 * mfu)


def estimate_step(
    *,
    params: float,
    tokens: float,
    framework: str,
    precision: str,
    gpus: int,
    nodes: int,
    gbps_per_node: float,
    fabric_kind: str,
    bf16_tflops: float,
    mfu: float = MFU,
    overlap: float = OVERLAP,
    bus_efficiency: float = BUS_EFFICIENCY,
    bucket_mib: float = BUCKET_MIB,
    gpu: str = "",
) -> StepEstimate | None:
    """Estimate sync and compute time per step; None when it cannot be estimated.

    The bus bandwidth is archform.estimate.nccl's (ring, or NCCL's tree at two nodes, capped
    by the GPU's NVLink figure) at `bus_efficiency` of the NIC line rate.
    """
    if gpus <= 0 or nodes <= 0 or bf16_tflops <= 0 or gbps_per_node <= 0:
        return None
    size = gradient_bytes(params, precision)
    factor = VOLUME_FACTOR.get(framework, 1.0)
    per_node = max(1, gpus // nodes)
    if nodes > 1:
        bw = nccl.allreduce_busbw(nodes, per_node, gbps_per_node, gpu, eff=bus_efficiency)
        busbw = bw.gbytes * 1e9
    else:
        busbw = gbps_per_node * 1e9 / 8 * bus_efficiency
    bandwidth = factor * ring_allreduce_seconds(size, gpus, busbw)
    hops = math.ceil(math.log2(nodes)) if nodes > 1 else 0
    calls = math.ceil(factor * size / (bucket_mib * 2**20))
    latency = calls * 2 * hops * ALPHA_US.get(fabric_kind, 50.0) * 1e-6
    sync = bandwidth + latency
    return StepEstimate(
        gpus=gpus,
        nodes=nodes,
        gradient_bytes=size,
        volume_factor=factor,
        busbw_bytes_per_s=busbw,
        bandwidth_s=bandwidth,
        latency_s=latency,
        sync_s=sync,
        exposed_s=sync * (1.0 - overlap),
        compute_s=compute_seconds(params, tokens, gpus, bf16_tflops, mfu),
    )

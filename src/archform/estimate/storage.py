"""Parallel file system throughput and checkpoint write time.

Used by lint rule STO003. Sources are cited inline (vendor docs, papers).

Throughput
    Managed Lustre (FSx, GCP, Azure) scales with capacity x per-unit tier:
    throughput MB/s = capacity TiB x tier MB/s per TiB (FSx PERSISTENT_2 tiers 125/250/500/1000
    MB/s/TiB, https://docs.aws.amazon.com/fsx/latest/LustreGuide/managing-throughput-capacity.html;
    GCP Managed Lustre the same tiers,
    https://cloud.google.com/managed-lustre/docs/performance-tiers). On-prem file systems
    are described the same way (aggregate OST bandwidth divided by capacity).

Ingest demand
    DATA_GBPS_PER_8_GPUS = 1 GB/s of training-data read bandwidth per 8 GPUs (the
    STO003 default; an assumption sized for image/video-heavy pipelines, generous for text).

Checkpoint size
    STO003 sizes a full checkpoint at 16 bytes per parameter: ZeRO's count of
    mixed-precision Adam model states (fp16/bf16 weights 2 + gradients 2 + fp32 master
    weights, momentum and variance 12; Rajbhandari et al., arXiv:1910.02054 s3.1). A
    checkpoint does not need the gradients (~14 bytes/param), so 16 is slightly conservative.
    Write time = size / file-system write throughput (the servers, not the clients, are
    assumed to be the bottleneck).
"""

from __future__ import annotations

CHECKPOINT_BYTES_PER_PARAM = 16.0
DATA_GBPS_PER_8_GPUS = 1.0


def throughput_gbps(capacity_tib: float, mbps_per_tib: float) -> float:
    """Aggregate throughput in GB/s (decimal) from capacity and tier."""
    return capacity_tib * mbps_per_tib / 1000.0


def required_data_gbps(gpus: int, per_8_gpus: float = DATA_GBPS_PER_8_GPUS) -> float:
    """Training-data read bandwidth the GPUs need, in GB/s."""
    return gpus / 8.0 * per_8_gpus


def checkpoint_bytes(params: float, bytes_per_param: float = CHECKPOINT_BYTES_PER_PARAM) -> float:
    """Bytes of one full checkpoint with optimizer state."""
    return params * bytes_per_param


def checkpoint_write_seconds(params: float, gbps: float) -> float:
    """Seconds to write one full checkpoint at `gbps` GB/s."""
    return checkpoint_bytes(params) / (gbps * 1e9)

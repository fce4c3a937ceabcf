"""NET001 (slow-fabric-for-training): option bounds, the bandwidth ratio, the compared fabric.

Expected text is worked from the blueprint, the rule doc and the catalog's sourced entries:
the reference is the catalog's fastest RDMA type of the same GPU (p5.48xlarge's 3,200 Gbps
EFA for H100, https://aws.amazon.com/ec2/instance-types/p5/), else the 200 Gbps floor (no
RDMA type in the catalog has H100 NVL, Azure's NC H100 v5 sizes are Ethernet only:
https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ncadsh100v5-series;
nor V100, p3.16xlarge: https://aws.amazon.com/ec2/instance-types/p3/). The step model's
figures come from `archform estimate --format json` run as a separate process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from rulecase import findings

import support
from archform.lint.rules.net.net001_slow_fabric_for_training import Net001Options

STEP = "; archform estimate's step model gives "
ETH_HINT = "use InfiniBand or RoCE (or the instance's EFA/RDMA fabric) at 200 Gbps or more"


def _text(gpu: str, kind: str, gbps: int, nodes: int = 4, per_node: int = 8) -> str:
    return (
        f"version: 1\nkind: TrainingCluster\nname: {kind}{gbps}\n"
        "placement: {provider: onprem, region: lab}\n"
        f"compute: {{nodes: {nodes}, gpu: {{model: {gpu}, per_node: {per_node}}}}}\n"
        f"fabric: {{kind: {kind}, gbps_per_node: {gbps}}}\n"
        "training: {framework: pytorch_fsdp, model: llama-3.1-8b}\n"
    )


def _estimate(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "est.yaml"
    path.write_text(text)
    proc = support.run_cli(["estimate", str(path), "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    [est] = json.loads(proc.stdout)
    return dict(est)


def _figures(slow: dict[str, Any], fast: dict[str, Any]) -> tuple[str, str]:
    lost = 1 - slow["tokens_per_s_per_gpu"] / fast["tokens_per_s_per_gpu"]
    return (
        f"{slow['tokens_per_s_per_gpu']:,.0f} tokens/s per GPU here vs "
        f"{fast['tokens_per_s_per_gpu']:,.0f} "
    ), (
        f"({lost:.0%} fewer, step {slow['step']['step_s']:.2f} s vs "
        f"{fast['step']['step_s']:.2f} s, exposed data-parallel sync "
        f"{slow['step']['data_parallel_exposed_s']:.2f} s vs "
        f"{fast['step']['data_parallel_exposed_s']:.2f} s)"
    )


@pytest.mark.parametrize(
    ("options", "ok"),
    [
        ({"min_gbps": 0}, False),
        ({"min_gbps": 1}, True),
        ({"min_gbps": 100_000}, True),
        ({"min_gbps": 100_001}, False),
        ({"min_gpus": 0}, False),
        ({"min_gpus": 1}, True),
        ({"min_gpus": 10_000_000}, True),
        ({"min_gpus": 10_000_001}, False),
    ],
)
def test_option_bounds(options: dict[str, int], ok: bool) -> None:
    if ok:
        Net001Options.model_validate(options)
    else:
        with pytest.raises(ValidationError):
            Net001Options.model_validate(options)


def test_defaults_are_the_documented_ones() -> None:
    opts = Net001Options()
    assert (opts.min_gbps, opts.min_gpus) == (200, 16)


def test_ethernet_message_states_the_ratio_to_the_reference() -> None:
    (f,) = findings("NET001", _text("H100", "ethernet", 75))
    # 3,200 / 75 = 42.67
    assert f.message.startswith(
        "32 GPUs on 4 nodes train over plain Ethernet (75 Gbps per node, TCP, no RDMA); "
        "threshold: RDMA (InfiniBand or RoCE) at >= 200 Gbps per node from 16 GPUs; "
        "p5.48xlarge (H100) carries 3200 Gbps of efa, 42.7x this node's 75 Gbps" + STEP
    )
    assert "on p5.48xlarge's 3200 Gbps efa" in f.message
    assert f.hint == ETH_HINT


@pytest.mark.parametrize("gbps", [3200, 6400])
def test_ethernet_as_fast_as_the_reference_is_compared_with_rdma_at_its_own_rate(
    gbps: int,
) -> None:
    # nothing in the catalog carries more than this node: the floor's ratio, and the step
    # model on RDMA at the node's own rate
    (f,) = findings("NET001", _text("H100", "ethernet", gbps))
    ratio = f"{200 / gbps:.3g}"  # 0.0625, 0.0312
    assert f"; the 200 Gbps floor is {ratio}x this node's {gbps} Gbps{STEP}" in f.message
    assert f"on {gbps} Gbps RDMA" in f.message
    assert "p5.48xlarge" not in f.message


@pytest.mark.parametrize(("gbps", "rdma"), [(150, 200), (400, 400)])
def test_without_a_reference_type_the_floor_is_compared(
    tmp_path: Path, gbps: int, rdma: int
) -> None:
    text = _text("H100-NVL", "ethernet", gbps)
    (f,) = findings("NET001", text)
    ratio = f"{200 / gbps:.3g}"  # 200 / 150 = 1.33, 200 / 400 = 0.5
    assert f"; the 200 Gbps floor is {ratio}x this node's {gbps} Gbps{STEP}" in f.message
    slow = _estimate(tmp_path, text)
    fast = _estimate(tmp_path, _text("H100-NVL", "roce", rdma))
    head, tail = _figures(slow, fast)
    assert f"{head}on {rdma} Gbps RDMA {tail}" in f.message


def test_a_gpu_without_an_estimate_still_gets_the_ratio() -> None:
    # V100: no BF16 in the catalog, so no step model figures; no RDMA type either
    (f,) = findings("NET001", _text("V100", "ethernet", 100))
    assert f.message.endswith("; the 200 Gbps floor is 2x this node's 100 Gbps")


def test_slow_rdma_message_and_hint() -> None:
    (f,) = findings(
        "NET001",
        "version: 1\nkind: TrainingCluster\nname: g5\n"
        "placement: {provider: aws, region: us-east-1, zones: [us-east-1a]}\n"
        "compute: {nodes: 2, instance_type: g5.48xlarge}\n",
    )
    # 2 x 8 A10G on g5.48xlarge's own 100 Gbps EFA, the catalog's fastest A10G type
    assert f.message.startswith(
        "16 GPUs on 2 nodes share a 100 Gbps-per-node efa fabric; threshold: >= 200 Gbps per "
        "node from 16 GPUs; the 200 Gbps floor is 2x this node's 100 Gbps"
    )
    assert f.hint == "provision at least 200 Gbps per node"
    assert f.path == "fabric.gbps_per_node"

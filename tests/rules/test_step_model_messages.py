"""NET001, NET002, NET008 and TRN002 state the figures `archform estimate` gives for the same
blueprint.

The expectation is read from `archform estimate --format json` run as a separate process on
the blueprint and on the blueprint with the fabric the finding compares against; the finding
from `archform lint --format json`. Both are rounded as the JSON is (tokens/s to 0.1, seconds
to 0.001) and formatted as the message does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import support

HEAD = "version: 1\nkind: TrainingCluster\nname: {name}\n"


def _write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(HEAD.format(name=name) + body)
    return path


def _estimate(*paths: Path) -> dict[str, dict[str, Any]]:
    proc = support.run_cli(["estimate", *map(str, paths), "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    return {e["name"]: e for e in json.loads(proc.stdout)}


def _message(path: Path, code: str) -> str:
    proc = support.run_cli(["lint", str(path), "--format", "json"])
    assert proc.returncode in (0, 1), proc.stderr
    [finding] = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == code]
    return str(finding["message"])


def _figures(slow: dict[str, Any], fast: dict[str, Any]) -> list[str]:
    """The numbers as the message writes them, from the two estimates."""
    lost = 1 - slow["tokens_per_s_per_gpu"] / fast["tokens_per_s_per_gpu"]
    return [
        f"{slow['tokens_per_s_per_gpu']:,.0f} tokens/s per GPU",
        f"vs {fast['tokens_per_s_per_gpu']:,.0f} ",
        f"({lost:.0%} fewer, step {slow['step']['step_s']:.2f} s vs {fast['step']['step_s']:.2f} s",
        f"exposed data-parallel sync {slow['step']['data_parallel_exposed_s']:.2f} s vs "
        f"{fast['step']['data_parallel_exposed_s']:.2f} s",
    ]


WORK = (
    "training: {framework: pytorch_fsdp, model: llama-3.1-8b, global_batch_tokens: 1e6, "
    "sequence_length: 8192}\n"
)
ONPREM = (
    "placement: {provider: onprem, region: lab}\n"
    "compute: {nodes: 8, gpu: {model: H100, per_node: 8}}\n"
)


def test_net001_numbers_are_the_estimates_for_the_declared_model(tmp_path: Path) -> None:
    slow = _write(tmp_path, "slow", ONPREM + "fabric: {kind: roce, gbps_per_node: 100}\n" + WORK)
    # NET001's reference for H100 nodes: the catalog's fastest RDMA fabric, p5.48xlarge's
    # 3,200 Gbps EFA (the message names it).
    ref = _write(tmp_path, "ref", ONPREM + "fabric: {kind: efa, gbps_per_node: 3200}\n" + WORK)
    est = _estimate(slow, ref)
    message = _message(slow, "NET001")
    assert "p5.48xlarge's 3200 Gbps efa" in message
    for part in _figures(est["slow"], est["ref"]):
        assert part in message
    assert est["slow"]["step"]["data_parallel_exposed_s"] > 0
    assert "assumed" not in message


def test_net002_numbers_are_the_estimates_at_the_per_gpu_floor(tmp_path: Path) -> None:
    slow = _write(
        tmp_path, "slow", ONPREM + "fabric: {kind: infiniband, gbps_per_node: 400}\n" + WORK
    )
    # NET002's floor: 100 Gbps per GPU, 800 Gbps per 8-GPU node.
    floor = _write(
        tmp_path, "floor", ONPREM + "fabric: {kind: infiniband, gbps_per_node: 800}\n" + WORK
    )
    est = _estimate(slow, floor)
    message = _message(slow, "NET002")
    assert "on 800 Gbps per node (100 per GPU)" in message
    for part in _figures(est["slow"], est["floor"]):
        assert part in message
    assert est["slow"]["tokens_per_s_per_gpu"] < est["floor"]["tokens_per_s_per_gpu"]


def test_trn002_numbers_are_the_estimates_across_and_within_a_zone(tmp_path: Path) -> None:
    cloud = (
        "placement: {provider: aws, region: us-east-1, zones: [us-east-1a, us-east-1b]}\n"
        "compute: {nodes: 8, instance_type: p5.48xlarge}\n"
    )
    multi = _write(tmp_path, "multi", cloud + WORK)
    # Across zones: TCP at 80 Gbps per node (TRN002's documented default); in one zone the
    # blueprint's own fabric (p5.48xlarge: 3,200 Gbps EFA, from the catalog).
    across = _write(
        tmp_path,
        "across",
        cloud.replace(", zones: [us-east-1a, us-east-1b]", "")
        + "fabric: {kind: ethernet, gbps_per_node: 80}\n"
        + WORK,
    )
    est = _estimate(multi, across)
    message = _message(multi, "TRN002")
    assert "across zones over TCP at 80 Gbps per node" in message
    assert "in one zone on the 3200 Gbps efa fabric" in message
    for part in _figures(est["across"], est["multi"]):
        assert part in message
    assert est["across"]["tokens_per_s_per_gpu"] < est["multi"]["tokens_per_s_per_gpu"]


@pytest.mark.parametrize("code", ["NET001", "TRN002"])
def test_without_a_model_the_assumed_one_is_named_and_its_numbers_used(
    tmp_path: Path, code: str
) -> None:
    if code == "NET001":
        body = ONPREM + "fabric: {kind: roce, gbps_per_node: 100}\n"
        ref_fabric = "fabric: {kind: efa, gbps_per_node: 3200}\n"
        bare = _write(tmp_path, "bare", body)
        slow_name, fast_name = "named", "ref"
        named = _write(tmp_path, "named", body + "training: {model: llama-3.1-70b}\n")
        ref = _write(tmp_path, "ref", ONPREM + ref_fabric + "training: {model: llama-3.1-70b}\n")
    else:
        body = (
            "placement: {provider: aws, region: us-east-1, zones: [us-east-1a, us-east-1c]}\n"
            "compute: {nodes: 8, instance_type: p5.48xlarge}\n"
        )
        bare = _write(tmp_path, "bare", body)
        slow_name, fast_name = "ref", "named"
        named = _write(tmp_path, "named", body + "training: {model: llama-3.1-70b}\n")
        ref = _write(
            tmp_path,
            "ref",
            body
            + "fabric: {kind: ethernet, gbps_per_node: 80}\ntraining: {model: llama-3.1-70b}\n",
        )
    est = _estimate(named, ref)
    message = _message(bare, code)
    assert "no training.model_params declared: llama-3.1-70b assumed" in message
    for part in _figures(est[slow_name], est[fast_name]):
        assert part in message


def test_net008_numbers_are_the_estimates_exposed_sync_and_compute(tmp_path: Path) -> None:
    # The rule doc's example: 70B FSDP on 32 x 8 H100 over 200 Gbps RoCE, and the same cluster
    # on 8 x 400 Gbps InfiniBand that the finding compares against.
    work = "training: {framework: pytorch_fsdp, model_params: 70e9}\n"
    nodes = (
        "placement: {provider: onprem, region: lab}\n"
        "compute: {nodes: 32, gpu: {model: H100, per_node: 8}}\n"
    )
    slow = _write(tmp_path, "slow", nodes + "fabric: {kind: roce, gbps_per_node: 200}\n" + work)
    ib = _write(tmp_path, "ib", nodes + "fabric: {kind: infiniband, gbps_per_node: 3200}\n" + work)
    est = _estimate(slow, ib)
    step = est["slow"]["step"]
    exposed, compute = step["data_parallel_exposed_s"], step["compute_s"]
    message = _message(slow, "NET008")
    assert (
        f"estimated exposed data-parallel sync {exposed:.2f} s per step is "
        f"{exposed / compute:.0%} of the {compute:.2f} s compute" in message
    )
    assert f"gives {step['data_parallel_busbw_gbytes']:g} GB/s busbw" in message
    assert f"({step['data_parallel_sync_s']:.2f} s of sync)" in message
    # FSDP (ZeRO stage 3): reduce-scatter, then two all-gathers of the parameters.
    for c in step["data_parallel_collectives"]:
        assert f"{c['collective']} of {c['gbytes']:,.0f} GB of {c['of']} {c['seconds']:.2f} s" in (
            message
        )
    assert len(step["data_parallel_collectives"]) == 3
    assert "on 8 x 400 Gbps InfiniBand" in message
    for part in _figures(est["slow"], est["ib"]):
        assert part in message
    # The lint threshold is read against the estimate: the InfiniBand cluster stays silent.
    assert est["ib"]["step"]["data_parallel_exposed_s"] / est["ib"]["step"]["compute_s"] <= 0.30
    proc = support.run_cli(["lint", str(ib), "--format", "json", "--select", "NET008"])
    assert json.loads(proc.stdout)["findings"] == []


@pytest.mark.parametrize(
    ("framework", "stage", "source"),
    [
        ("deepspeed", 0, "https://www.deepspeed.ai/docs/config-json/"),
        ("nemo", 1, "use_distributed_optimizer=True"),
    ],
)
def test_trn010_warns_at_the_frameworks_default_with_the_estimates_memory(
    tmp_path: Path, framework: str, stage: int, source: str
) -> None:
    body = (
        "placement: {provider: onprem, region: lab}\n"
        "compute: {nodes: 16, gpu: {model: H100, per_node: 8}}\n"
        "fabric: {kind: infiniband, gbps_per_node: 3200}\n"
        f"training: {{framework: {framework}, model_params: 70e9}}\n"
    )
    path = _write(tmp_path, framework, body)
    [est] = _estimate(path).values()
    mem = est["memory_per_gpu"]
    assert not mem["fits"] and not est["runs"] and mem["zero_stage"] == stage
    proc = support.run_cli(["lint", str(path), "--format", "json"])
    [finding] = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "TRN010"]
    assert finding["severity"] == "warning"
    message = finding["message"]
    assert message.startswith(
        f"zero_stage is not written; at {framework}'s default (stage {stage}, "
    )
    assert source in message
    assert f"the state is {mem['total_gb']:,.1f} GB per GPU of {mem['gpu_gb']:,.1f} GB" in message
    # Written, the same overflow is an error (the rule's design); sharded, both are silent.
    zero = _write(
        tmp_path, "zero", body.replace("model_params", f"zero_stage: {stage}, model_params")
    )
    proc = support.run_cli(["lint", str(zero), "--format", "json"])
    [finding] = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "TRN010"]
    assert finding["severity"] == "error"
    three = _write(tmp_path, "three", body.replace("model_params", "zero_stage: 3, model_params"))
    [est3] = _estimate(three).values()
    assert est3["runs"] and est3["memory_per_gpu"]["fits"]
    proc = support.run_cli(["lint", str(three), "--format", "json"])
    assert [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "TRN010"] == []

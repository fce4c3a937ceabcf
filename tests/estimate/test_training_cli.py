"""`archform estimate` on TrainingClusters and `archform diff` of a fabric change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import support
from archform.cli.estimate import _training_text, training_json
from archform.diff.engine import diff_sets
from archform.diff.report import to_json, to_text
from archform.spec import load_paths
from archform.spec.models.training import TrainingCluster

TRAINING_BLUEPRINTS = sorted(
    p
    for p in support.BLUEPRINTS.glob("*.yaml")
    if any(d.kind == "TrainingCluster" for d in load_paths([p]).documents)
)


def _json(*args: str) -> list[dict]:
    proc = support.run_cli(["estimate", *args, "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_bundled_training_cluster_has_a_json_estimate() -> None:
    # One process for all of them (start-up time); each file is its own blueprint set.
    clusters = [
        d.model for p in TRAINING_BLUEPRINTS for d in load_paths([p]).of_kind(TrainingCluster)
    ]
    out = [e for e in _json(*map(str, TRAINING_BLUEPRINTS)) if e.get("kind") == "TrainingCluster"]
    assert len(clusters) >= 5
    assert [e["name"] for e in out] == [c.name for c in clusters]
    for est, cluster in zip(out, clusters, strict=True):
        if cluster.training is None or cluster.training.model_params is None:
            assert est["estimate"] is None and "model_params" in est["why"]
            continue
        assert cluster.compute.gpu is not None
        assert est["gpus"] == cluster.compute.nodes * cluster.compute.gpu.per_node
        assert 0 < est["mfu"] <= 1 and not est["impossible"]
        assert est["tokens_per_s"] == pytest.approx(est["tokens_per_s_per_gpu"] * est["gpus"], 1e-3)
        step = est["step"]
        parts = (
            step["compute_s"]
            + step["pipeline_bubble_s"]
            + step["tensor_parallel_s"]
            + step["data_parallel_exposed_s"]
        )
        assert step["step_s"] == pytest.approx(parts, abs=0.005)


def _cluster(tmp_path: Path, name: str, fabric: str, budget: bool = True) -> Path:
    text = (support.BLUEPRINTS / "azure-nd-h100-v5.yaml").read_text()
    extra = "  token_budget: 1e12\n" if budget else ""
    text = text.replace("storage:\n", fabric + "storage:\n", 1)
    text = text.replace(
        "  checkpoint_interval_minutes: 30\n", "  checkpoint_interval_minutes: 30\n" + extra, 1
    )
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _estimate(path: Path) -> dict:
    [cluster] = [d.model for d in load_paths([path]).of_kind(TrainingCluster)]
    return training_json(cluster, None)


def test_diff_infiniband_to_100g_roce_reports_throughput_and_cost_deltas(tmp_path: Path) -> None:
    ib = _cluster(tmp_path, "ib", "fabric:\n  kind: infiniband\n  gbps_per_node: 3200\n")
    roce = _cluster(tmp_path, "roce", "fabric:\n  kind: roce\n  gbps_per_node: 100\n")
    report = diff_sets(load_paths([ib]), load_paths([roce]))
    [delta] = json.loads(to_json(report))["training"]
    old, new = delta["old"], delta["new"]
    before, after = _estimate(ib), _estimate(roce)
    # The diff's figures are the estimate's, before and after.
    assert old["tokens_per_s"] == before["tokens_per_s"]
    assert new["tokens_per_s"] == after["tokens_per_s"]
    assert new["tokens_per_s"] < old["tokens_per_s"]
    assert new["usd_per_million_tokens"] > old["usd_per_million_tokens"]
    assert new["usd_for_budget"] > old["usd_for_budget"]
    assert after["step"]["data_parallel_exposed_s"] > 0
    text = to_text(report)
    assert "Training throughput" in text and "cost per million tokens" in text


def test_claimed_throughput_above_peak_is_impossible(tmp_path: Path) -> None:
    # Issue 22: the article's 340K tokens/s for a 70B fine-tune on 32 H100s.
    path = tmp_path / "article.yaml"
    path.write_text(
        "version: 1\nkind: TrainingCluster\nname: article\n"
        "placement: {provider: aws, region: us-east-1}\n"
        "compute: {nodes: 4, instance_type: p5.48xlarge}\n"
        "fabric: {kind: efa, gbps_per_node: 3200}\n"
        "training: {framework: pytorch_fsdp, model_params: 70e9}\n"
    )
    [cluster] = [d.model for d in load_paths([path]).of_kind(TrainingCluster)]
    est = training_json(cluster, 340_000)
    assert est["claim"]["impossible"] and est["claim"]["implied_mfu"] > 4.5
    text = "\n".join(_training_text(est))
    assert "IMPOSSIBLE" in text and "340,000" not in text


def test_parallelism_that_does_not_divide_the_gpus_is_an_error_at_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "version: 1\nkind: TrainingCluster\nname: bad\n"
        "placement: {provider: aws, region: us-east-1}\n"
        "compute: {nodes: 3, instance_type: p5.48xlarge, gpu: {model: H100, per_node: 8}}\n"
        "fabric: {kind: efa, gbps_per_node: 3200}\n"
        "training:\n  model_params: 70e9\n  tensor_parallel: 8\n  pipeline_parallel: 16\n"
    )
    proc = support.run_cli(["estimate", str(path)])
    assert proc.returncode == 2
    assert "does not divide" in proc.stderr and "Traceback" not in proc.stderr
    assert f"{path}:7:" in proc.stderr

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


def _work(tmp_path: Path, name: str, compute: str, fabric: str, training: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"version: 1\nkind: TrainingCluster\nname: {name}\n"
        f"placement: {{provider: onprem, region: lab}}\ncompute: {compute}\n"
        f"fabric: {fabric}\ntraining: {training}\n"
    )
    return path


def test_zero_stage_sets_collectives_and_memory_per_gpu(tmp_path: Path) -> None:
    # ZeRO (arXiv:1910.02054 s3.1, s7): 16 bytes per parameter of model states, divided by the
    # data-parallel degree as the stage shards them; stage 3 all-gathers the weights again.
    compute = "{nodes: 16, gpu: {model: H100, per_node: 8}}"
    fabric = "{kind: roce, gbps_per_node: 400}"
    paths = [
        _work(
            tmp_path,
            f"z{z}",
            compute,
            fabric,
            f"{{framework: deepspeed, zero_stage: {z}, model_params: 70e9, "
            "activation_checkpointing: full, layers: 80, hidden_size: 8192}",
        )
        for z in range(4)
    ]
    out = {e["name"]: e for e in _json(*map(str, paths))}
    dp = 128
    states = {0: 16 * 70, 1: (4 + 12 / dp) * 70, 2: (2 + 14 / dp) * 70, 3: 16 * 70 / dp}
    for z, gb in states.items():
        e = out[f"z{z}"]
        assert e["parallelism"]["zero_stage"] == z
        assert e["memory_per_gpu"]["model_states_gb"] == pytest.approx(gb, abs=0.01)
        assert e["memory_per_gpu"]["zero_stage_from"] == "blueprint"
        # Korthikanti et al. (arXiv:2205.05198) full recomputation: 2 s b h bytes per layer.
        assert e["memory_per_gpu"]["activations_gb"] == pytest.approx(
            80 * 2 * 4096 * 8192 / 1e9, abs=0.01
        )
    assert not out["z0"]["memory_per_gpu"]["fits"] and out["z3"]["memory_per_gpu"]["fits"]
    kinds = {
        z: [c["collective"] for c in out[f"z{z}"]["step"]["data_parallel_collectives"]]
        for z in states
    }
    assert kinds[0] == ["all-reduce"]
    assert kinds[1] == kinds[2] == ["reduce-scatter", "all-gather"]
    assert kinds[3] == ["reduce-scatter", "all-gather", "all-gather"]
    sync = {z: out[f"z{z}"]["step"]["data_parallel_sync_s"] for z in states}
    assert sync[3] == pytest.approx(1.5 * sync[2], rel=0.01)
    assert out["z3"]["step"]["step_s"] > out["z0"]["step"]["step_s"]


def test_fp8_runs_at_the_catalog_fp8_peak_and_not_on_a100(tmp_path: Path) -> None:
    fabric = "{kind: infiniband, gbps_per_node: 3200}"
    work = "{framework: megatron, model: llama-3.1-70b, tensor_parallel: 4, pipeline_parallel: 4"
    h100 = "{nodes: 8, gpu: {model: H100, per_node: 8}}"
    bf16 = _work(tmp_path, "bf16", h100, fabric, work + "}")
    fp8 = _work(tmp_path, "fp8", h100, fabric, work + ", precision: fp8}")
    a100 = _work(
        tmp_path,
        "a100",
        "{nodes: 8, gpu: {model: A100, per_node: 8}}",
        fabric,
        work + ", precision: fp8}",
    )
    out = {e["name"]: e for e in _json(str(bf16), str(fp8), str(a100))}
    # NVIDIA H100 SXM: 1,979 dense FP8 TFLOPS, 989 BF16 (half the sparsity figures).
    assert out["fp8"]["peak_tflops_per_gpu"] == 1979 and out["bf16"]["peak_tflops_per_gpu"] == 989
    ratio = out["fp8"]["tokens_per_s_per_gpu"] / out["bf16"]["tokens_per_s_per_gpu"]
    assert 1.2 < ratio < 2.5
    assert out["a100"]["estimate"] is None and "TRN009" in out["a100"]["why"]


def test_llama3_405b_blueprint_estimate_is_within_20_percent_of_the_report(tmp_path: Path) -> None:
    # Llama 3 report (arXiv:2407.21783) Table 4: 16,384 H100, TP 8, PP 16, DP 128, 8,192-token
    # sequences, 16M tokens per batch, BF16 MFU 41 %; interleaved schedule (v = 8, derived in
    # training_calibration.yaml); 400 Gbps RoCE per GPU.
    path = _work(
        tmp_path,
        "llama3",
        "{nodes: 2048, gpu: {model: H100, per_node: 8}}",
        "{kind: roce, gbps_per_node: 3200}",
        "{framework: megatron, model: llama-3.1-405b, tensor_parallel: 8, pipeline_parallel: 16,"
        " virtual_pipeline_stages: 8, sequence_length: 8192, global_batch_tokens: 16777216}",
    )
    [e] = _json(str(path))
    assert e["parallelism"]["data_parallel"] == 128
    assert 0.41 * 0.8 <= e["mfu"] <= 0.41 * 1.2


def test_every_bundled_training_cluster_fits_and_lint_agrees() -> None:
    # Every TrainingCluster and Platform training cluster of blueprints/ (one process each).
    out = [
        e
        for e in _json(*map(str, sorted(support.BLUEPRINTS.glob("*.yaml"))))
        if e.get("kind") == "TrainingCluster" and e.get("estimate", True) is not None
    ]
    assert {"azure-ndv5-train", "gcp-a3mega-train", "aws-p5-train"} <= {e["name"] for e in out}
    for e in out:
        assert e["memory_per_gpu"]["fits"], e["name"]
        assert e["runs"] and e["cannot_run"] is None, e["name"]
    lint = support.run_cli(["lint", str(support.BLUEPRINTS), "--format", "json"])
    assert lint.returncode in (0, 1), lint.stderr
    assert [f for f in json.loads(lint.stdout)["findings"] if f["rule"] == "TRN010"] == []


def test_bundled_gcp_blueprint_runs_nemos_llama3_70b_recipe_layout() -> None:
    # NeMo's llama3_70b pre-training recipe (nemo/collections/llm/recipes/llama3_70b.py):
    # TP 4, PP 4, VP 5, CP 2, 8,192-token sequences, global batch 512 x 8,192 tokens.
    [e] = _json(str(support.BLUEPRINTS / "gcp-a3-mega-tcpxo.yaml"))
    p = e["parallelism"]
    assert (p["tensor_parallel"], p["pipeline_parallel"], p["virtual_pipeline_stages"]) == (4, 4, 5)
    assert (p["context_parallel"], p["sequence_length"]) == (2, 8192)
    assert p["global_batch_tokens"] == 512 * 8192
    assert p["data_parallel"] == 128 // (4 * 4 * 2)
    # NeMo's distributed optimizer (ZeRO-1) over DP 4: (4 + 12 / 4) x 70e9 / 16 = 30.6 GB.
    assert e["memory_per_gpu"]["model_states_gb"] == pytest.approx(7 * 70 / 16, abs=0.01)


def test_a_state_that_does_not_fit_cannot_run_in_text_and_json(tmp_path: Path) -> None:
    # DeepSpeed's default, ZeRO stage 0: 16 bytes x 70e9 on every GPU (ZeRO paper s3.1).
    path = _work(
        tmp_path,
        "ds0",
        "{nodes: 16, gpu: {model: H100, per_node: 8}}",
        "{kind: infiniband, gbps_per_node: 3200}",
        "{framework: deepspeed, model_params: 70e9, token_budget: 1e12}",
    )
    [e] = _json(str(path))
    assert e["runs"] is False and not e["memory_per_gpu"]["fits"]
    assert e["memory_per_gpu"]["model_states_gb"] == pytest.approx(16 * 70, abs=0.01)
    total, gpu = e["memory_per_gpu"]["total_gb"], e["memory_per_gpu"]["gpu_gb"]
    assert f"needs {total:,.1f} GB per GPU of {gpu:,.1f} GB (ZeRO stage 0" in e["cannot_run"]
    text = support.run_cli(["estimate", str(path)]).stdout
    assert "CANNOT RUN" in text and "CUDA out of memory" in text
    (throughput,) = [line for line in text.splitlines() if line.startswith("  throughput")]
    assert "not reachable as declared" in throughput
    (budget,) = [line for line in text.splitlines() if line.startswith("  token budget")]
    assert "cannot run as declared" in budget
    # With the stage that shards it all, the same cluster runs and the throughput stands.
    fits = _work(
        tmp_path,
        "ds3",
        "{nodes: 16, gpu: {model: H100, per_node: 8}}",
        "{kind: infiniband, gbps_per_node: 3200}",
        "{framework: deepspeed, zero_stage: 3, model_params: 70e9}",
    )
    assert "CANNOT RUN" not in support.run_cli(["estimate", str(fits)]).stdout

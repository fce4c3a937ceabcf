"""SkyServe service YAML read directly as an InferenceFleet: findings at the file's own lines.

Each file under skyserve/ is a SkyServe service (a SkyPilot task with `service:`) written here,
with `# expect:` / `# must-not:` markers, or `# error: LINE:COL` on its first line when
SkyServe's own schema (or archform) refuses it (harness.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archform.lint.engine import lint
from archform.spec import load_paths, load_text
from archform.spec.discovery import is_blueprint_text
from archform.spec.peers import reader_for
from spec.peers.harness import TODAY, assert_findings, assert_refused, round_trip, split
from support import run_cli

HERE = Path(__file__).parent / "skyserve"
FILES = sorted(HERE.glob("*.yaml"))
LINTED, REFUSED = split(FILES)


def test_at_least_eight_services() -> None:
    assert len(LINTED) >= 8


@pytest.mark.parametrize("path", LINTED, ids=lambda p: p.stem)
def test_findings_at_the_services_own_lines(path: Path) -> None:
    assert_findings(path)


@pytest.mark.parametrize("path", REFUSED, ids=lambda p: p.stem)
def test_refused_services_fail_at_their_line(path: Path) -> None:
    assert_refused(path)


@pytest.mark.parametrize("path", LINTED, ids=lambda p: p.stem)
def test_import_then_lint_gives_the_same_rule_codes(path: Path) -> None:
    source, imported, _ = round_trip(path)
    assert imported == source


def test_misspelt_key_is_skyserves_own_error_exit_2() -> None:
    proc = run_cli(["lint", str(HERE / "misspelt_key.yaml")])
    assert proc.returncode == 2
    assert "misspelt_key.yaml:6:5: error: service.replica_policy.max_replica: " in proc.stderr
    assert "Invalid service YAML" in proc.stderr and "'max_replicas'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_service_across_two_regions_maps_each_value_from_its_line() -> None:
    (doc,) = load_paths([HERE / "vllm_two_regions.yaml"]).documents
    assert doc.peer is not None and doc.peer.format == "skyserve"
    mapped = doc.peer.mapped
    assert mapped["kind"] == "InferenceFleet"
    assert mapped["placement"] == {"provider": "aws", "regions": ["us-east-1", "us-west-2"]}
    # min_replicas 4 / max_replicas 16 are totals over both regions.
    assert mapped["gpu_pool"]["min_nodes_per_region"] == 2
    assert mapped["gpu_pool"]["max_nodes_per_region"] == 8
    # g6.xlarge is the 1 x L4 size with 4 vCPUs (https://aws.amazon.com/ec2/instance-types/g6/).
    assert mapped["gpu_pool"]["instance_type"] == "g6.xlarge"
    assert mapped["autoscaling"] == {"metric": "requests_per_second", "target": 2.5}
    assert mapped["model"]["base"] == "llama-3.1-8b"
    assert mapped["model"]["source"] == "hf://meta-llama/Llama-3.1-8B-Instruct"
    assert mapped["model"]["max_context_tokens"] == 8192
    assert mapped["server"] == {
        "kind": "vllm",
        "tensor_parallel": 1,
        "port": 8000,
        "load_time_seconds": 900,
    }
    origins = doc.peer.origins
    assert (
        origins[("model", "max_context_tokens")].pos.line,
        origins[("model", "max_context_tokens")].pos.column,
    ) == (25, 5)
    assert origins[("server", "port")].pos.line == 24
    assert origins[("placement", "regions", 1)].pos.line == 21
    assert origins[("gpu_pool", "max_nodes_per_region")].pos.line == 10


def test_without_max_model_len_vllm_takes_the_models_trained_context() -> None:
    text = (HERE / "vllm_two_regions.yaml").read_text("utf-8")
    text = text.replace("    --max-model-len 8192 \\\n", "")
    (doc,) = load_text(text, "serve.yaml").documents
    assert doc.peer is not None
    # Llama 3.1's config.json: max_position_embeddings 131072
    # (https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json).
    assert doc.peer.mapped["model"]["max_context_tokens"] == 131072
    # 16 GB of bf16 weights plus 16 GiB of KV cache at 131072 tokens (32 layers x 8 KV heads x
    # 128 x 2 x 2 bytes = 128 KiB a token) exceed a 24 GB L4: vLLM refuses to start.
    codes = {f.rule for f in lint(load_text(text, "serve.yaml"), today=TODAY).findings}
    assert "INF008" in codes


def test_a_model_on_a_mounted_bucket_reads_from_it() -> None:
    (doc,) = load_paths([HERE / "spot_with_floor_bucket.yaml"]).documents
    assert doc.peer is not None
    model = doc.peer.mapped["model"]
    assert model["source"] == "s3://corp-models/mistral-7b-instruct-v0.3/"
    assert model["base"] == "mistral-7b"
    pool = doc.peer.mapped["gpu_pool"]
    assert (pool["purchase"], pool["on_demand_floor_per_region"]) == ("spot", 1)
    assert doc.peer.mapped["server"]["port"] == 8080


def test_envs_expand_into_run_as_skypilot_exports_them() -> None:
    (doc,) = load_paths([HERE / "default_one_replica_envs.yaml"]).documents
    assert doc.peer is not None
    assert doc.peer.mapped["model"]["source"] == "hf://mistralai/Mistral-7B-Instruct-v0.3"
    notes = {n.path for n in doc.peer.notes}
    assert "envs.HF_TOKEN" in notes and "envs.MODEL_NAME" not in notes


def test_detected_by_content_not_name() -> None:
    text = (HERE / "scale_to_zero.yaml").read_text("utf-8")
    assert is_blueprint_text(text)
    (doc,) = load_text(text, "anything.yml").documents
    assert doc.peer is not None and doc.peer.format == "skyserve"
    task = reader_for({"resources": {"cloud": "aws"}, "run": "x"})
    assert task is not None and task.NAME == "skypilot"
    service = reader_for({"service": {"replicas": 1}, "run": "x"})
    assert service is not None and service.NAME == "skyserve"


def test_a_70b_model_on_one_l4_is_reported_with_its_weights() -> None:
    result = lint(load_paths([HERE / "llama70b_on_one_l4.yaml"]), today=TODAY)
    (hit,) = [f for f in result.findings if f.rule == "INF008"]
    # Llama 3.1 70B has 70.6e9 parameters (its model card): 141 GB of bf16 weights, 131.5 GiB,
    # against one L4's 24 GB. The finding sits on the vllm command's line.
    assert "131.5 GiB weights" in hit.message
    assert (hit.line, hit.column) == (10, 6)


def test_a_switch_before_the_model_does_not_swallow_it() -> None:
    # --enable-prefix-caching takes no value (vLLM engine args), so the model after it is
    # still the positional model.
    (doc,) = load_paths([HERE / "vllm_two_regions.yaml"]).documents
    assert doc.peer is not None
    assert doc.peer.mapped["model"]["base"] == "llama-3.1-8b"
    (note,) = [n for n in doc.peer.notes if n.path == "run"]
    assert "--gpu-memory-utilization, --enable-prefix-caching" in note.message

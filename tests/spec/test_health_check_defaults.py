"""Health checks are on by default: a minimal GPU blueprint on any provider gets NHC and the
DCGM prolog, and archform's own SCH003 stays quiet on it (issue 21 item 8)."""

from __future__ import annotations

import pytest

from archform.lint.engine import lint
from archform.render.generate import build_files
from archform.spec import TrainingCluster, load_text

MINIMAL = {
    "aws": "placement: {provider: aws, region: us-east-1, zones: [us-east-1a]}\n"
    "compute: {nodes: 2, instance_type: p5.48xlarge}\n",
    "gcp": "placement: {provider: gcp, region: us-central1, zones: [us-central1-a]}\n"
    "compute: {nodes: 2, instance_type: a3-megagpu-8g}\n",
    "azure": "placement: {provider: azure, region: eastus}\n"
    "compute: {nodes: 2, instance_type: Standard_ND96isr_H100_v5}\n",
    "onprem": "placement: {provider: onprem, region: lab}\n"
    "compute: {nodes: 2, gpu: {model: H100, per_node: 8}}\n"
    "fabric: {kind: infiniband, gbps_per_node: 3200, rails: 8}\n",
}


def _text(provider: str, extra: str = "") -> str:
    return f"version: 1\nkind: TrainingCluster\nname: t\n{MINIMAL[provider]}{extra}"


def _cluster(text: str) -> TrainingCluster:
    model = load_text(text, "bp.yaml").documents[0].model
    assert isinstance(model, TrainingCluster)
    return model


@pytest.mark.parametrize("provider", sorted(MINIMAL))
def test_minimal_gpu_blueprint_gets_nhc_and_dcgm_and_no_sch003(provider: str) -> None:
    text = _text(provider)
    assert _cluster(text).scheduler.health_checks == ["nhc", "dcgm"]
    blueprints = load_text(text, "bp.yaml")
    codes = {f.rule for f in lint(blueprints).findings}
    assert "SCH003" not in codes
    files = {f.path: f.content.decode() for f in build_files(blueprints)}
    conf = files["ansible/roles/slurm/files/slurm.conf"]
    assert "HealthCheckProgram=/usr/sbin/nhc" in conf
    assert "Prolog=/etc/slurm/prolog.sh" in conf
    assert "- health" in files["ansible/site.yml"] or "role: health" in files["ansible/site.yml"]
    assert "health_checks:\n  - nhc\n  - dcgm\n" in files["resolved-blueprint.yaml"]


def test_written_empty_list_turns_checks_off_and_sch003_warns() -> None:
    text = _text("aws", "scheduler: {health_checks: []}\n")
    assert _cluster(text).scheduler.health_checks == []
    findings = lint(load_text(text, "bp.yaml")).findings
    sch003 = [f for f in findings if f.rule == "SCH003"]
    assert len(sch003) == 1 and sch003[0].line == 6


def test_written_list_is_kept() -> None:
    cluster = _cluster(_text("aws", "scheduler: {health_checks: [nhc]}\n"))
    assert cluster.scheduler.health_checks == ["nhc"]


def test_cpu_only_cluster_gets_no_gpu_checks() -> None:
    text = (
        "version: 1\nkind: TrainingCluster\nname: t\npurpose: hpc\n"
        "placement: {provider: onprem, region: lab}\n"
        "compute: {nodes: 1, cpu: {sockets: 1, cores_per_socket: 4}}\n"
        "fabric: {kind: ethernet, gbps_per_node: 10}\n"
    )
    assert _cluster(text).scheduler.health_checks == []

"""A new instance type of a known family is one catalog entry and nothing else.

A copy of the bundled catalog gets one entry, `a3-megagpu-4g`: a size Google does not sell,
made up here so that the bundled catalog can never already hold it. archform is pointed at the
copy with ARCHFORM_CATALOG and, with no code change, validates, lints and generates a
blueprint using the type; the generated program and manifests carry the family's facts
(8 GPU VPCs at MTU 8244, the a3-mega GKE accelerator name), taken from `families`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from support import ROOT, run_cli

DATA = ROOT / "src" / "archform" / "spec" / "data"
NEW = "a3-megagpu-4g"
TRAINING = f"""\
version: 1
kind: TrainingCluster
name: newtype
placement: {{provider: gcp, region: us-central1, zones: [us-central1-a]}}
compute: {{nodes: 4, instance_type: {NEW}}}
scheduler: {{health_checks: [nhc, dcgm], backup_controller: true}}
"""
FLEET = f"""\
version: 1
kind: InferenceFleet
name: newfleet
placement: {{provider: gcp, regions: [us-central1, europe-west4]}}
model: {{name: m, params: 8B, source: "gs://corp-models/m/"}}
server: {{kind: vllm, tensor_parallel: 4}}
gpu_pool: {{instance_type: {NEW}, min_nodes_per_region: 1, max_nodes_per_region: 4}}
"""


def _catalog_copy(tmp_path: Path, suffix: str) -> Path:
    data = YAML(typ="safe").load((DATA / "catalog.yaml").read_text("utf-8"))
    assert NEW not in data["instances"]
    entry = dict(data["instances"]["a3-megagpu-8g"])
    entry.update(
        {
            "cpu": {"cores_per_socket": 52, "sockets": 1, "threads_per_core": 2},
            "gpu": {"count": 4, "model": "H100"},
            "vcpus": 104,
            "memory_gib": 936,
            "fabric": {"gbps": 800, "interfaces": 4, "kind": "gpudirect_tcpxo"},
            "source": "https://example.invalid/made-up-for-this-test",
        }
    )
    data["instances"][NEW] = entry
    path = tmp_path / f"catalog{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(data, default=str), "utf-8")
    else:
        YAML(typ="safe").dump(data, path)
    return path


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_one_entry_in_a_catalog_copy_is_enough(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "bp.yaml").write_text(TRAINING + "---\n" + FLEET, "utf-8")
    bundled = run_cli(["validate", "bp.yaml"], cwd=tmp_path)
    assert bundled.returncode == 2 and f"'{NEW}' is not in archform's catalog" in bundled.stderr
    env = {"ARCHFORM_CATALOG": str(_catalog_copy(tmp_path, suffix))}
    validate = run_cli(["validate", "bp.yaml"], cwd=tmp_path, env=env)
    assert validate.returncode == 0, validate.stderr
    lint = run_cli(["lint", "bp.yaml", "--fail-on", "error"], cwd=tmp_path, env=env)
    assert lint.returncode in (0, 1) and "Traceback" not in lint.stderr, lint.stderr
    assert "not in archform's catalog" not in lint.stdout + lint.stderr
    gen = run_cli(["generate", "bp.yaml", "-o", "out"], cwd=tmp_path, env=env)
    assert gen.returncode == 0, gen.stderr
    settings = (tmp_path / "out" / "newtype" / "pulumi" / "settings.py").read_text()
    assert "'mtu': 8244" in settings or '"mtu": 8244' in settings
    # 8 GPU VPCs carved from placement.network.gpu_cidr (default 10.64.0.0/16), in
    # GPU_NETWORKS and the group
    assert settings.count("'10.64.") == 8 * 2
    resolved = (tmp_path / "out" / "resolved-blueprint.yaml").read_text()
    assert "per_node: 4" in resolved and "kind: gpudirect_tcpxo" in resolved
    manifests = "".join(
        p.read_text() for p in (tmp_path / "out" / "newfleet").rglob("*") if p.is_file()
    )
    assert "nvidia-h100-mega-80gb" in manifests


@pytest.mark.parametrize(
    ("content", "name", "says"),
    [
        (None, "missing.yaml", "cannot read it"),
        ("gpus: [unclosed\n", "bad.yaml", "not valid YAML"),
        ("{}", "empty.json", "not a catalog"),
        ("gpus: {}\ninstances: {x1: {family: nope}}\n", "fam.yaml", "unknown family 'nope'"),
        ("gpus: {}\ninstances: {x1: {provider: aws}}\n", "keys.yaml", "lacks a key"),
    ],
)
def test_a_broken_catalog_is_a_usage_error(
    tmp_path: Path, content: str | None, name: str, says: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content, "utf-8")
    (tmp_path / "bp.yaml").write_text(TRAINING, "utf-8")
    result = run_cli(["validate", "bp.yaml"], cwd=tmp_path, env={"ARCHFORM_CATALOG": str(path)})
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ARCHFORM_CATALOG=") or line.startswith("error: catalog:")
    assert says in line and "(hint: " in line

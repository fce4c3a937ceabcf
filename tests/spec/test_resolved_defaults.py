"""resolved-blueprint.yaml shows every default the generators used: one home per fact.

The node image is chosen once (spec.images.default_image, filled into compute.image by the
model), the default Slurm release once (spec/data/slurm/upgrades.json); the generated
Ansible variables must name the same values the resolved blueprint shows. A network range
whose default depends on the provider (None in the model) shows as the range the generated
program creates (spec.networks.used_defaults), and stays unset where the provider has none.
"""

from __future__ import annotations

import ast
import ipaddress
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import support
from archform.render.generate import RESOLVED, build_files
from archform.spec import load_paths, load_text
from archform.spec.models.training import Scheduler
from support import BLUEPRINTS
from support.fleet_cases import GCP_FIXTURE

BARE = """\
version: 1
kind: TrainingCluster
name: t
placement: {provider: aws, region: us-east-1}
compute: {name: gpu, nodes: 2, instance_type: p5.48xlarge}
fabric: {kind: efa}
"""


def _files(text: str) -> dict[str, str]:
    blueprints = load_text(text, "t.yaml")
    return {f.path: f.content.decode() for f in build_files(blueprints)}


def test_default_slurm_release_comes_from_the_release_data() -> None:
    data = resources.files("archform.spec").joinpath("data/slurm/upgrades.json").read_text()
    assert Scheduler().version == json.loads(data)["default_version"]


def test_resolved_blueprint_names_the_image_and_slurm_release_used() -> None:
    files = _files(BARE)
    resolved = YAML(typ="safe").load(files[RESOLVED])
    image = resolved["compute"]["image"]
    version = resolved["scheduler"]["version"]
    assert image and version
    group_vars = files["ansible/group_vars/all.yml"].splitlines()
    assert f'archform_image: "{image}"' in group_vars
    assert f'slurm_version: "{version}"' in group_vars


# -- the network ranges a provider-dependent field left unset resolves to ----------------------

FLEET_LINE = re.compile(r"^FLEET: dict\[str, Any\] = (.*)$", re.M)


def _generate(path: Path, kind: str = "") -> tuple[dict[str, str], dict[str, Any]]:
    """The generated files and the resolved document of `kind` (the first one if "")."""
    files = {f.path: f.content.decode() for f in build_files(load_paths([path]))}
    docs = list(YAML(typ="safe").load_all(files[RESOLVED]))
    return files, next(d for d in docs if d["kind"] == kind or not kind)


def _fleet_program(files: dict[str, str]) -> dict[str, Any]:
    (path,) = [p for p in files if p.endswith("pulumi/fleet_objects.py")]
    match = FLEET_LINE.search(files[path])
    assert match, path
    value: dict[str, Any] = ast.literal_eval(match.group(1))
    return value


def test_a_gcp_cluster_shows_the_private_services_range_its_program_peers() -> None:
    files, resolved = _generate(BLUEPRINTS / "gcp-a3-mega-tcpxo.yaml")
    net = resolved["placement"]["network"]
    # Unset psa_cidr: the upper half of the system block (10.42.0.0/16 -> 10.42.128.0/17).
    assert net["cidr"] == "10.42.0.0/16"
    assert net["psa_cidr"] == "10.42.128.0/17"
    assert f"PSA_CIDR = '{net['psa_cidr']}'" in files["pulumi/settings.py"].splitlines()


def test_a_cluster_on_a_cloud_without_the_range_leaves_it_unset() -> None:
    _, resolved = _generate(BLUEPRINTS / "aws-p5-efa-fsx.yaml")
    assert resolved["placement"]["network"]["psa_cidr"] is None


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # EKS: archform's Service range is the one EKS itself picks for a VPC in 10.0.0.0/8
        # (API_KubernetesNetworkConfigRequest: "172.20.0.0/16"); EKS pods use VPC addresses.
        (
            BLUEPRINTS / "inference-h100-single-region.yaml",
            {"service_cidr": "172.20.0.0/16", "pod_cidr": None, "control_plane_cidr": None},
        ),
        (
            BLUEPRINTS / "inference-3region-a10.yaml",
            {
                "service_cidr": "172.30.0.0/16",
                "pod_cidr": "172.31.0.0/16",
                "control_plane_cidr": None,
            },
        ),
        (
            GCP_FIXTURE,
            {"service_cidr": None, "pod_cidr": None, "control_plane_cidr": "10.99.0.0/24"},
        ),
    ],
    ids=["aws", "azure", "gcp"],
)
def test_a_fleet_shows_the_cluster_ranges_its_program_creates(
    path: Path, expected: dict[str, str | None]
) -> None:
    files, resolved = _generate(path, "InferenceFleet")
    net = resolved["placement"]["network"]
    assert {k: net[k] for k in expected} == expected
    program = _fleet_program(files)
    assert program["service_cidr"] == net["service_cidr"]
    assert program["pod_cidr"] == net["pod_cidr"]
    if net["control_plane_cidr"]:
        # Region i's GKE control plane is the i-th /28 of the block.
        block = ipaddress.IPv4Network(net["control_plane_cidr"])
        planes = [ipaddress.IPv4Network(r["control_plane_cidr"]) for r in program["regions"]]
        assert planes[0] == ipaddress.IPv4Network("10.99.0.0/28")
        assert all(p.subnet_of(block) for p in planes)


@pytest.mark.parametrize("path", support.bundled_blueprints(), ids=lambda p: p.stem)
def test_the_resolved_blueprint_generates_what_its_source_did(path: Path, tmp_path: Path) -> None:
    """What the generators saw: fed back, the resolved blueprint gives the same tree."""
    files, _ = _generate(path)
    again = tmp_path / "resolved.yaml"
    again.write_text(files[RESOLVED])
    regenerated, _ = _generate(again)
    assert sorted(regenerated) == sorted(files)
    differ = [p for p in files if regenerated[p] != files[p]]
    assert differ == []

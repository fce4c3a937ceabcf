"""`archform plan --format json` lists what the AWS p5 program creates, matching the blueprint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from archform.spec import TrainingCluster, load_paths
from archform.spec.catalog import load_catalog
from support import BLUEPRINTS, ROOT, require_module, run_cli

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_plan_json_counts_match_the_p5_blueprint() -> None:
    require_module("pulumi", "pulumi_aws")
    path = BLUEPRINTS / "aws-p5-efa-fsx.yaml"
    result = run_cli(["plan", str(path), "--format", "json"], timeout=300)
    assert result.returncode == 0, result.stderr
    (project,) = json.loads(result.stdout)["projects"]
    cluster = load_paths([path]).documents[0].model
    assert isinstance(cluster, TrainingCluster)
    counts = project["resources"]
    heads = 1 + cluster.scheduler.login_nodes
    assert counts["aws:ec2/instance:Instance"] == cluster.compute.nodes + heads
    lustre = [s for s in cluster.storage if s.kind == "lustre"]
    assert counts["aws:fsx/lustreFileSystem:LustreFileSystem"] == len(lustre)
    assert counts["aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"] == sum(
        1 for s in lustre if s.source
    )
    assert counts["aws:efs/fileSystem:FileSystem"] == sum(
        1 for s in cluster.storage if s.kind == "nfs"
    )
    # Capacity Block nodes are co-located by the block; a placement group on top causes
    # insufficient-capacity errors (aws-parallelcluster PlacementGroupCapacityTypeValidator).
    assert cluster.compute.purchase == "capacity_block"
    assert counts.get("aws:ec2/placementGroup:PlacementGroup", 0) == 0
    (gpu_lt,) = [
        d
        for d in project["details"]
        if d["type"] == "aws:ec2/launchTemplate:LaunchTemplate"
        and d["args"]["instanceType"] == cluster.compute.instance_type
    ]
    info = load_catalog().instance(cluster.compute.instance_type or "")
    assert info is not None
    nics = gpu_lt["args"]["networkInterfaces"]
    assert nics["network_cards"] == info.fabric_interfaces == 32
    assert nics["types"] == {"efa-only": info.fabric_interfaces, "interface": 1}
    tiers = sorted(
        d["args"]["perUnitStorageThroughput"]
        for d in project["details"]
        if d["type"] == "aws:fsx/lustreFileSystem:LustreFileSystem"
    )
    assert tiers == sorted(s.throughput_mbps_per_tib for s in lustre)
    # Both have no default: the Capacity Block id, and the key pair Ansible logs in with.
    assert project["mock_config"] == ["gpuCapacityReservationId", "keyName"]


def test_plan_text_names_types_and_counts() -> None:
    require_module("pulumi", "pulumi_gcp")
    result = run_cli(["plan", str(BLUEPRINTS / "gcp-a3-mega-tcpxo.yaml")], timeout=300)
    assert result.returncode == 0, result.stderr
    assert "      9  gcp:compute/network:Network" in result.stdout
    assert "mtu=8244" in result.stdout


def test_plan_of_onprem_blueprint_is_a_usage_error() -> None:
    result = run_cli(["plan", str(BLUEPRINTS / "onprem-cpu-smoke.yaml")])
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "no Pulumi project" in result.stderr


def test_plan_without_pulumi_names_the_extra(tmp_path: Path) -> None:
    # sys.modules["pulumi"] = None makes importlib report the SDK as not installed.
    code = (
        "import sys; sys.modules['pulumi'] = None; "
        "from archform.cli import main; sys.argv = ['archform', 'plan', sys.argv[1]]; main()"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, "-c", code, str(BLUEPRINTS / "aws-p5-efa-fsx.yaml")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    from archform.install import extra_hint  # same interpreter and tree: the same install kind

    assert proc.stderr.count("\n") == 1 and extra_hint("aws") in proc.stderr, proc.stderr


def test_plan_config_overrides_replace_mock_values() -> None:
    require_module("pulumi", "pulumi_aws")
    path = BLUEPRINTS / "aws-p5-efa-fsx.yaml"
    args = ["plan", str(path), "--format", "json", "-c", "gpuCapacityReservationId=cr-0aaa"]
    args += ["-c", "keyName=ops"]
    result = run_cli(args, timeout=300)
    assert result.returncode == 0, result.stderr
    (project,) = json.loads(result.stdout)["projects"]
    assert project["mock_config"] == []
    bad = run_cli(["plan", str(path), "-c", "no-equals-sign"])
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


@pytest.mark.parametrize(
    ("blueprint", "module"),
    [
        ("aws-p5-efa-fsx.yaml", "pulumi_aws"),
        ("gcp-a3-mega-tcpxo.yaml", "pulumi_gcp"),
        ("azure-nd-h100-v5.yaml", "pulumi_azure_native"),
    ],
)
def test_plan_json_carries_every_resource_with_full_inputs(blueprint: str, module: str) -> None:
    """Like `pulumi preview --json`: one step per resource, inputs whole, not only key args."""
    require_module("pulumi", module)
    result = run_cli(["plan", str(BLUEPRINTS / blueprint), "--format", "json"], timeout=300)
    assert result.returncode == 0, result.stderr
    for project in json.loads(result.stdout)["projects"]:
        steps = project["steps"]
        assert len(steps) == sum(project["resources"].values())
        urns = [s["urn"] for s in steps]
        assert len(set(urns)) == len(urns), "URNs must be unique"
        by_type: dict[str, int] = {}
        for step in steps:
            assert step["op"] == "create"
            # urn:pulumi:<stack>::<project>::<parent types $>type::<name>
            assert step["urn"].rsplit("::", 1)[0].endswith(step["newState"]["type"])
            by_type[step["newState"]["type"]] = by_type.get(step["newState"]["type"], 0) + 1
        assert by_type == project["resources"]
        # Each summarised key argument is also in the full inputs, with the same value
        # (network interfaces are summarised, so they are compared by count only).
        inputs = {
            s["urn"].split("::")[-1] + "|" + s["newState"]["type"]: s["newState"]["inputs"]
            for s in steps
        }
        for detail in project["details"]:
            full = inputs[detail["name"] + "|" + detail["type"]]
            for key, value in detail["args"].items():
                if key != "networkInterfaces":
                    assert full[key] == value, (detail["name"], key)


def test_plan_json_inputs_include_arguments_beyond_the_key_ones() -> None:
    """A reviewer can check IMDSv2 and volume encryption, which the key-argument list omits."""
    require_module("pulumi", "pulumi_aws")
    result = run_cli(
        ["plan", str(BLUEPRINTS / "aws-p5-efa-fsx.yaml"), "--format", "json"], timeout=300
    )
    assert result.returncode == 0, result.stderr
    (project,) = json.loads(result.stdout)["projects"]
    templates = [
        s["newState"]["inputs"]
        for s in project["steps"]
        if s["newState"]["type"] == "aws:ec2/launchTemplate:LaunchTemplate"
    ]
    assert templates
    for lt in templates:
        assert lt["metadataOptions"]["httpTokens"] == "required"
        for device in lt["blockDeviceMappings"]:
            assert device["ebs"]["encrypted"] in (True, "true")

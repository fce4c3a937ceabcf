"""API endpoint exposure follows kubernetes.api_access_cidrs on every cloud: never 0.0.0.0/0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import support
from archform.render.generate import build_files
from archform.spec import InferenceFleet, SpecError, load_text
from support.fleet_cases import GCP_FIXTURE, PROVIDERS, _dump, deployer_network, variant

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RAW = YAML(typ="safe", pure=True).load(GCP_FIXTURE.read_text("utf-8"))


def _program(
    provider: str, cidrs: list[str], tmp_path: Path, deployer: dict[str, Any] | None = None
) -> Any:
    support.require_module(
        "pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_kubernetes"
    )
    from archform.verify.pulumi_mock import run_program

    raw = variant(RAW, provider) if provider != "gcp" else dict(RAW)
    raw["kubernetes"] = {"version": "1.30", "api_access_cidrs": cidrs}
    if deployer is not None:
        raw["kubernetes"]["deployer"] = deployer
    raw["traffic"] = {**raw["traffic"], "global_load_balancer": False}
    for f in build_files(load_text(_dump(raw))):
        path = tmp_path / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f.content)
    return run_program(tmp_path / "pulumi")


def _clusters(run: Any, provider: str) -> list[dict[str, Any]]:
    token = {
        "aws": "aws:eks/cluster:Cluster",
        "gcp": "gcp:container/cluster:Cluster",
        "azure": "azure-native:containerservice:ManagedCluster",
    }[provider]
    return [r.inputs for r in run.of_type(token)]


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_no_cidrs_and_no_deployer_path_is_refused_before_anything_is_created(
    provider: str, tmp_path: Path
) -> None:
    """A private API nobody can reach: the program stops at preview (it used to build the
    clusters for a quarter of an hour and then fail on the first Kubernetes call)."""
    from archform.verify.pulumi_mock import MockProgramError

    with pytest.raises(MockProgramError, match="nothing connects the deployer"):
        _program(provider, [], tmp_path)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_private_cidrs_with_a_deployer_network_keep_the_api_private(
    provider: str, tmp_path: Path
) -> None:
    network = deployer_network(provider, PROVIDERS[provider]["regions"])
    run = _program(
        provider, ["10.0.0.0/8"], tmp_path, {"network": network, "cidrs": ["10.0.0.0/24"]}
    )
    for c in _clusters(run, provider):
        if provider == "aws":
            assert c["vpcConfig"]["endpointPublicAccess"] is False
            assert "publicAccessCidrs" not in c["vpcConfig"]
        elif provider == "gcp":
            assert c["privateClusterConfig"]["enablePrivateEndpoint"] is True
            assert c["privateClusterConfig"]["masterGlobalAccessConfig"] == {"enabled": True}
        else:
            assert c["apiServerAccessProfile"] == {
                "enablePrivateCluster": True,
                "enablePrivateClusterPublicFQDN": True,
            }


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_public_cidr_restricts_a_public_endpoint(provider: str, tmp_path: Path) -> None:
    run = _program(provider, ["35.190.0.0/24", "10.0.0.0/8"], tmp_path)
    for c in _clusters(run, provider):
        assert "0.0.0.0/0" not in json.dumps(c)
        if provider == "aws":
            assert c["vpcConfig"]["endpointPublicAccess"] is True
            assert c["vpcConfig"]["publicAccessCidrs"] == ["35.190.0.0/24"]
        elif provider == "gcp":
            assert c["privateClusterConfig"]["enablePrivateEndpoint"] is False
            got = [b["cidrBlock"] for b in c["masterAuthorizedNetworksConfig"]["cidrBlocks"]]
            assert got == ["35.190.0.0/24", "10.0.0.0/8"]
        else:
            assert c["apiServerAccessProfile"] == {"authorizedIPRanges": ["35.190.0.0/24"]}


def test_tensor_parallel_larger_than_a_node_is_refused_at_load() -> None:
    raw = dict(RAW)
    raw["server"] = {**raw["server"], "tensor_parallel": 4}  # g2-standard-24 has 2 GPUs
    with pytest.raises(SpecError, match="tensor_parallel 4 exceeds the 2 GPUs") as info:
        load_text(_dump(raw))
    assert info.value.problems[0].path == "server.tensor_parallel"
    assert "at most 2" in info.value.problems[0].hint


@pytest.mark.parametrize(
    ("provider", "zones"), [("aws", ["zone-b"]), ("gcp", ["us-central1-b"]), ("azure", ["2"])]
)
def test_gpu_zones_config_pins_the_gpu_pools(
    provider: str, zones: list[str], tmp_path: Path
) -> None:
    support.require_module(
        "pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_kubernetes"
    )
    from archform.verify.pulumi_mock import run_program

    raw = variant(RAW, provider) if provider != "gcp" else dict(RAW)
    fleet = load_text(_dump(raw)).of_kind(InferenceFleet)[0].model
    assert isinstance(fleet, InferenceFleet)
    first = fleet.placement.all_regions[0]
    for f in build_files(load_text(_dump(raw))):
        path = tmp_path / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f.content)
    config = {"gpuZones": json.dumps({first: zones}), "dnsZoneId": "Z1", "dnsName": "a.example"}
    run = run_program(tmp_path / "pulumi", config)
    if provider == "aws":
        subnets = {r.name: r.inputs for r in run.of_type("aws:ec2/subnet:Subnet")}
        key = first.replace("-", "")
        pools = [
            r
            for r in run.of_type("aws:eks/nodeGroup:NodeGroup")
            if r.name.startswith(key) and "NVIDIA" in r.inputs["amiType"]
        ]
        for pool in pools:
            assert pool.inputs["subnetIds"] == [f"{key}-private-1-id"]
        assert subnets[f"{key}-private-1"]["availabilityZone"] == "zone-b"
        system = next(
            r for r in run.of_type("aws:eks/nodeGroup:NodeGroup") if r.name == f"{key}-system"
        )
        assert len(system.inputs["subnetIds"]) == 3
    elif provider == "gcp":
        pools = [
            r
            for r in run.of_type("gcp:container/nodePool:NodePool")
            if r.inputs["nodeConfig"].get("guestAccelerators")
        ]
        pinned = [p for p in pools if p.inputs.get("nodeLocations") == zones]
        assert len(pinned) == 2  # the on-demand floor and the spot pool of the first region
    else:
        pools = run.of_type("azure-native:containerservice:AgentPool")
        assert sorted(len(p.inputs["availabilityZones"]) for p in pools) == [1, 1, 3, 3, 3, 3]

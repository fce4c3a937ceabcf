"""The address ranges archform's generated Pulumi programs create never overlap.

Each program (bundled training clusters, every fleet case, a Cluster Toolkit-style GCP
cluster) runs under `pulumi.runtime.set_mocks` with the real provider SDKs; the ranges are
read from what it registered, never from archform's own layout code:

- leaves (subnets, GKE secondary ranges and control planes, the PSA range, EKS/AKS Service
  and pod ranges) must be pairwise disjoint: GCP refuses a VM whose NICs' subnets overlap,
  and a range routed twice is reachable once;
- networks (AWS VPCs, Azure VNets) must be pairwise disjoint, and a leaf either lies inside
  one or overlaps none;
- a cluster's own Service and pod ranges (EKS, AKS overlay) are routable only inside that
  cluster: they overlap no network and no leaf, but every cluster may reuse them.
"""

from __future__ import annotations

import ipaddress
import itertools
from pathlib import Path
from typing import Any

import pytest
from pulumi_cases import CLOUD_CLUSTERS, IDS

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_text
from support import BLUEPRINTS
from support.fleet_cases import fleet_cases

pytestmark = [pytest.mark.integration, pytest.mark.slow]

Net = ipaddress.IPv4Network
FLEET_CONFIG = {"dnsZoneId": "Z0000000000000000MOCK", "dnsName": "api.example.com"}


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def ranges(
    run: Any,
) -> tuple[list[tuple[str, Net]], list[tuple[str, Net]], list[tuple[str, Net]]]:
    """(networks, leaves, cluster-internal ranges) as (resource name.field, range)."""
    networks: list[tuple[str, Net]] = []
    leaves: list[tuple[str, Net]] = []
    internal: list[tuple[str, Net]] = []
    for r in run.resources:
        i = r.inputs
        if r.type == "gcp:compute/subnetwork:Subnetwork":
            leaves.append((f"{r.name}.ipCidrRange", Net(i["ipCidrRange"])))
            for s in i.get("secondaryIpRanges") or []:
                leaves.append((f"{r.name}.{s['rangeName']}", Net(s["ipCidrRange"])))
        elif r.type == "gcp:compute/globalAddress:GlobalAddress" and i.get("prefixLength"):
            leaves.append((r.name, Net(f"{i['address']}/{int(i['prefixLength'])}")))
        elif r.type == "gcp:container/cluster:Cluster":
            block = _get(i, "privateClusterConfig", "masterIpv4CidrBlock")
            if block:
                leaves.append((f"{r.name}.master", Net(block)))
        elif r.type == "aws:ec2/vpc:Vpc":
            networks.append((r.name, Net(i["cidrBlock"])))
        elif r.type == "aws:ec2/subnet:Subnet":
            leaves.append((r.name, Net(i["cidrBlock"])))
        elif r.type == "aws:eks/cluster:Cluster":
            block = _get(i, "kubernetesNetworkConfig", "serviceIpv4Cidr")
            internal.append((f"{r.name}.services", Net(block)))
        elif r.type == "azure-native:network:VirtualNetwork":
            for p in _get(i, "addressSpace", "addressPrefixes") or []:
                networks.append((r.name, Net(p)))
        elif r.type == "azure-native:network:Subnet":
            leaves.append((r.name, Net(i["addressPrefix"])))
        elif r.type == "azure-native:containerservice:ManagedCluster":
            profile = i.get("networkProfile") or {}
            internal.append((f"{r.name}.pods", Net(profile["podCidr"])))
            internal.append((f"{r.name}.services", Net(profile["serviceCidr"])))
    return networks, leaves, internal


def overlaps(run: Any) -> list[str]:
    """Every pair of created ranges that may not overlap but does."""
    networks, leaves, internal = ranges(run)
    bad = [
        f"{a} {x} / {b} {y}"
        for (a, x), (b, y) in itertools.combinations(leaves, 2)
        if x.overlaps(y)
    ]
    bad += [
        f"{a} {x} / {b} {y}"
        for (a, x), (b, y) in itertools.combinations(networks, 2)
        if x.overlaps(y)
    ]
    for name, leaf in leaves:
        hit = [n for n in networks if leaf.overlaps(n[1])]
        if hit and not any(leaf.subnet_of(n) for _, n in hit):
            bad.append(f"{name} {leaf} straddles {hit}")
    for name, own in internal:
        cluster = name.rsplit(".", 1)[0]
        others = networks + leaves + [i for i in internal if i[0].startswith(f"{cluster}.")]
        bad += [f"{name} {own} / {b} {y}" for b, y in others if b != name and own.overlaps(y)]
    return bad


def _mock_training(text: str, name: str, root: Path) -> Any:
    from archform.verify.pulumi_mock import run_program
    from archform.verify.pulumi_projects import dry_run_config

    blueprints = load_text(text, f"<{name}>")
    files = [f for f in build_files(blueprints, [blueprints.by_name[name]])]
    write_tree(root, [f for f in files if f.path.startswith("pulumi/")])
    config, _ = dry_run_config(root / "pulumi")
    return run_program(root / "pulumi", config)


@pytest.mark.parametrize(("stem", "name"), CLOUD_CLUSTERS, ids=IDS)
def test_bundled_training_programs_create_disjoint_ranges(
    stem: str, name: str, tmp_path: Path
) -> None:
    support.require_module("pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native")
    run = _mock_training((BLUEPRINTS / f"{stem}.yaml").read_text("utf-8"), name, tmp_path)
    _, leaves, _ = ranges(run)
    assert leaves, "no ranges found: the extraction no longer matches the program"
    assert overlaps(run) == []


CT_STYLE = (
    (BLUEPRINTS / "gcp-a3-mega-tcpxo.yaml")
    .read_text("utf-8")
    .replace(
        "  zones: [us-central1-a]\n",
        # Cluster Toolkit's a3mega-slurm-blueprint.yaml: vars.sys_net_range 172.16.0.0/16
        # (github.com/GoogleCloudPlatform/cluster-toolkit, examples/machine-learning/
        # a3-megagpu-8g, read 2026-12-02).
        "  zones: [us-central1-a]\n  network:\n    cidr: 172.16.0.0/16\n",
    )
)


def test_cluster_toolkit_style_gcp_cluster_generates_without_overlap(tmp_path: Path) -> None:
    support.require_module("pulumi", "pulumi_gcp")
    assert "cidr: 172.16.0.0/16" in CT_STYLE
    run = _mock_training(CT_STYLE, "gcp-a3mega-train", tmp_path)
    _, leaves, _ = ranges(run)
    subnets = {n: r for n, r in leaves if n.endswith(".ipCidrRange")}
    # the system subnet is the lower half of the blueprint's block; 8 GPU VPC subnets beside it
    assert Net("172.16.0.0/17") in subnets.values()
    assert len(subnets) == 9, sorted(subnets)
    assert any(r.subnet_of(Net("172.16.0.0/16")) for _, r in leaves if "psa" in _.lower()), leaves
    assert overlaps(run) == []


FLEETS = fleet_cases()


@pytest.mark.parametrize("case", FLEETS, ids=[c.id for c in FLEETS])
def test_fleet_programs_create_disjoint_ranges(case: Any, tmp_path: Path) -> None:
    support.require_module(
        "pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_kubernetes"
    )
    from archform.verify.pulumi_mock import run_program

    _, blueprints = case.load()
    write_tree(tmp_path, build_files(blueprints))
    run = run_program(tmp_path / "pulumi", FLEET_CONFIG)
    _, leaves, _ = ranges(run)
    assert leaves, "no ranges found: the extraction no longer matches the program"
    assert overlaps(run) == []


def test_platform_tiers_create_disjoint_networks(tmp_path: Path) -> None:
    """The Platform's training cluster and fleet: no network of one overlaps the other's."""
    support.require_module("pulumi", "pulumi_aws", "pulumi_kubernetes")
    from archform.verify.pulumi_mock import run_program

    text = (BLUEPRINTS / "platform-two-tier.yaml").read_text("utf-8")
    train = _mock_training(text, "sivaro-train", tmp_path / "train")
    blueprints = load_text(text, "<platform>")
    fleet_root = tmp_path / "fleet"
    write_tree(fleet_root, build_files(blueprints, [blueprints.by_name["sivaro-serve"]]))
    fleet = run_program(fleet_root / "pulumi", FLEET_CONFIG)
    a = ranges(train)[0]
    b = ranges(fleet)[0]
    assert a and b
    assert [(x, y) for x, y in itertools.product(a, b) if x[1].overlaps(y[1])] == []

"""Blueprint variations: SSH closed, other instance families, limits refused at generate time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from archform.providers.aws.render.training import network_cards
from archform.providers.gcp.render.training import GpuNetworks, gpu_networks
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import SpecError, load_text
from support import BLUEPRINTS, require_module, run_cli


def _variant(stem: str, *edits: tuple[str, str]) -> str:
    text = (BLUEPRINTS / f"{stem}.yaml").read_text("utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


def _run(text: str, tmp_path: Path, config: dict[str, str] | None = None) -> Any:
    require_module("pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native")
    from archform.verify.pulumi_mock import run_program
    from archform.verify.pulumi_projects import dry_run_config

    write_tree(tmp_path / "out", build_files(load_text(text)))
    project = tmp_path / "out" / "pulumi"
    defaults, _ = dry_run_config(project)
    return run_program(project, {**defaults, **(config or {})})


@pytest.mark.parametrize(
    ("instance_type", "cards", "efa", "primary"),
    [
        ("p5.48xlarge", 32, 32, "interface"),
        ("p5e.48xlarge", 32, 32, "interface"),
        ("p5en.48xlarge", 16, 16, "interface"),
        ("p6-b200.48xlarge", 8, 8, "interface"),
        ("p4d.24xlarge", 4, 4, "efa"),
        ("p6e-gb200.36xlarge", 8, 8, "efa"),  # even cards efa, odd efa-only (ParallelCluster)
        ("g5.12xlarge", 1, 1, "efa"),
        ("g6.8xlarge", 1, 1, "efa"),
        ("g6.4xlarge", 1, 0, "interface"),
        ("m6i.2xlarge", 1, 0, "interface"),
    ],
)
def test_network_card_layout_follows_catalog(
    instance_type: str, cards: int, efa: int, primary: str
) -> None:
    layout = network_cards(instance_type)
    assert len({n.network_card_index for n in layout}) == cards
    assert sum(n.interface_type in ("efa", "efa-only") for n in layout) == efa
    (first,) = [n for n in layout if n.network_card_index == 0 and n.device_index == 0]
    assert first.interface_type == primary


def test_gcp_network_layouts_per_family() -> None:
    assert len(gpu_networks("a3-megagpu-8g").gvnic) == 8
    assert len(gpu_networks("a3-highgpu-8g").gvnic) == 4
    ultra = gpu_networks("a3-ultragpu-8g")
    assert (len(ultra.gvnic), len(ultra.rdma), ultra.mtu) == (1, 8, 8896)
    assert gpu_networks("a4-highgpu-8g") == ultra
    a4x = gpu_networks("a4x-highgpu-4g")  # one CX-7 RDMA NIC per GB200 GPU
    assert (len(a4x.gvnic), len(a4x.rdma), a4x.mtu) == (1, 4, 8896)
    # the small A3 High sizes have no GPUDirect NICs: the default network only
    assert gpu_networks("a3-highgpu-4g") == GpuNetworks(gvnic=[], rdma=[], mtu=1460)


def test_gb200_cards_alternate_efa_and_efa_only() -> None:
    layout = network_cards("p6e-gb200.36xlarge")
    assert [n.interface_type for n in layout[:4]] == ["efa", "efa-only", "efa", "efa-only"]


@pytest.mark.integration
@pytest.mark.parametrize("stem", ["aws-p5-efa-fsx", "gcp-a3-mega-tcpxo", "azure-nd-h100-v5"])
def test_no_ssh_rule_at_all_when_ssh_cidrs_is_empty(stem: str, tmp_path: Path) -> None:
    cidr = "[10.128.0.0/9]" if stem.startswith("gcp") else "[10.0.0.0/8]"
    run = _run(_variant(stem, (f"ssh_cidrs: {cidr}", "ssh_cidrs: []")), tmp_path)
    ssh = [
        r
        for r in run.resources
        if r.inputs.get("fromPort") == 22
        or "22" in str(r.inputs.get("allows", ""))
        or any(
            rule.get("destinationPortRange") == "22" for rule in r.inputs.get("securityRules", [])
        )
    ]
    assert ssh == []


@pytest.mark.integration
def test_gcp_ssh_rules_split_by_address_family(tmp_path: Path) -> None:
    # "A firewall rule can contain either IPv4 or IPv6 ranges, but not both."
    # https://cloud.google.com/firewall/docs/using-firewalls
    edit = ("ssh_cidrs: [10.128.0.0/9]", 'ssh_cidrs: [10.128.0.0/9, "fd00:1::/48", 192.168.0.0/16]')
    run = _run(_variant("gcp-a3-mega-tcpxo", edit), tmp_path)
    ssh = {
        r.name: r.inputs["sourceRanges"]
        for r in run.resources
        if r.type == "gcp:compute/firewall:Firewall" and "22" in str(r.inputs.get("allows", ""))
    }
    assert sorted(ssh.values()) == [["10.128.0.0/9", "192.168.0.0/16"], ["fd00:1::/48"]]


@pytest.mark.integration
def test_a3_ultra_gets_roce_network_profile_and_mrdma_nics(tmp_path: Path) -> None:
    # a3-ultragpu-8g is offered in us-central1-b, not -a (spec/data/places.json)
    variant = _variant("gcp-a3-mega-tcpxo", ("a3-megagpu-8g", "a3-ultragpu-8g"))
    variant = variant.replace("zones: [us-central1-a]", "zones: [us-central1-b]")
    assert "us-central1-b" in variant
    run = _run(variant, tmp_path)
    networks = run.of_type("gcp:compute/network:Network")
    assert len(networks) == 3 and {n.inputs["mtu"] for n in networks} == {8896}
    (rdma,) = [n for n in networks if "networkProfile" in n.inputs]
    assert rdma.inputs["networkProfile"].endswith("/networkProfiles/us-central1-b-vpc-roce")
    rdma_subnets = [s for s in run.of_type("gcp:compute/subnetwork:Subnetwork") if "rdma" in s.name]
    assert len(rdma_subnets) == 8
    node = next(i for i in run.of_type("gcp:compute/instance:Instance") if "-gpu" in i.name)
    types = [n["nicType"] for n in node.inputs["networkInterfaces"]]
    assert types == ["GVNIC", "GVNIC"] + ["MRDMA"] * 8


@pytest.mark.integration
def test_a4x_family_facts_reach_the_program(tmp_path: Path) -> None:
    """a4x-highgpu-4g (catalog family a4x-highgpu): 4 RDMA subnets, MTU 8896, Hyperdisk."""
    run = _run(_variant("gcp-a3-mega-tcpxo", ("a3-megagpu-8g", "a4x-highgpu-4g")), tmp_path)
    networks = run.of_type("gcp:compute/network:Network")
    assert {n.inputs["mtu"] for n in networks} == {8896}
    rdma_subnets = [s for s in run.of_type("gcp:compute/subnetwork:Subnetwork") if "rdma" in s.name]
    assert len(rdma_subnets) == 4
    node = next(i for i in run.of_type("gcp:compute/instance:Instance") if "-gpu" in i.name)
    assert node.inputs["machineType"] == "a4x-highgpu-4g"
    types = [n["nicType"] for n in node.inputs["networkInterfaces"]]
    assert types == ["GVNIC", "GVNIC"] + ["MRDMA"] * 4
    assert node.inputs["bootDisk"]["initializeParams"]["type"] == "hyperdisk-balanced"


@pytest.mark.integration
def test_gb200_launch_template_alternates_efa_and_efa_only(tmp_path: Path) -> None:
    run = _run(_variant("aws-p5-efa-fsx", ("p5.48xlarge", "p6e-gb200.36xlarge")), tmp_path)
    lts = {r.name: r.inputs for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    nics = lts["aws-p5-train-gpu"]["networkInterfaces"]
    assert [n["interfaceType"] for n in nics] == ["efa", "efa-only"] * 4
    assert [n["networkCardIndex"] for n in nics] == list(range(8))


@pytest.mark.integration
def test_spread_colocation_has_no_placement_group(tmp_path: Path) -> None:
    run = _run(
        _variant("aws-p5-efa-fsx", ("colocation: cluster ", "colocation: spread  ")), tmp_path
    )
    assert run.of_type("aws:ec2/placementGroup:PlacementGroup") == []
    lt = next(
        r for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("-gpu")
    )
    assert "groupName" not in lt.inputs["placement"]


@pytest.mark.integration
def test_capacity_block_without_reservation_id_fails_with_a_hint(tmp_path: Path) -> None:
    require_module("pulumi", "pulumi_aws")
    from archform.verify.pulumi_mock import MockProgramError

    with pytest.raises(MockProgramError, match="pulumi config set gpuCapacityReservationId"):
        _run(_variant("aws-p5-efa-fsx"), tmp_path, {"gpuCapacityReservationId": ""})


def test_azure_refuses_more_nodes_than_one_placement_group(tmp_path: Path) -> None:
    text = _variant("azure-nd-h100-v5", ("  nodes: 16\n", "  nodes: 101\n"))
    with pytest.raises(SpecError, match="at most 100"):
        load_text(text)
    blueprint = tmp_path / "big.yaml"
    blueprint.write_text(text, "utf-8")
    line = text.splitlines().index("  nodes: 101") + 1
    for command in (["validate", str(blueprint)], ["generate", str(blueprint), "-o", "out"]):
        result = run_cli(command, cwd=tmp_path)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "at most 100" in lines[0] and "hint:" in lines[0]
        assert lines[0].startswith(f"{blueprint}:{line}:10: error: compute.nodes: ")


def test_fsx_tier_outside_persistent_2_is_refused() -> None:
    text = _variant(
        "aws-p5-efa-fsx", ("throughput_mbps_per_tib: 500", "throughput_mbps_per_tib: 200")
    )
    with pytest.raises(SpecError, match="no 200 MB/s/TiB tier") as info:
        load_text(text)
    assert "125, 250, 500 or 1000" in info.value.problems[0].hint
    assert info.value.problems[0].path == "storage[1].throughput_mbps_per_tib"


@pytest.mark.integration
def test_scratch_deployment_uses_scratch_2_without_throughput(tmp_path: Path) -> None:
    text = _variant(
        "aws-p5-efa-fsx",
        (
            "    throughput_mbps_per_tib: 500\n",
            "    throughput_mbps_per_tib: 500\n    deployment: scratch\n",
        ),
    )
    run = _run(text, tmp_path)
    fs = next(
        r
        for r in run.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
        if r.name.endswith("checkpoints")
    )
    assert fs.inputs["deploymentType"] == "SCRATCH_2"
    assert "perUnitStorageThroughput" not in fs.inputs


@pytest.mark.integration
def test_extra_node_group_gets_its_own_launch_template_and_inventory_group(
    tmp_path: Path,
) -> None:
    text = _variant(
        "aws-p5-efa-fsx",
        (
            "  purchase: capacity_block ",
            "  extra_groups:\n    - {name: old, nodes: 2, instance_type: p4d.24xlarge}\n"
            "  purchase: capacity_block ",
        ),
    )
    run = _run(text, tmp_path)
    lts = {r.name: r.inputs for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    assert sorted(lts) == ["aws-p5-train-gpu", "aws-p5-train-head", "aws-p5-train-old"]
    old = lts["aws-p5-train-old"]
    assert old["instanceType"] == "p4d.24xlarge"
    assert [n["interfaceType"] for n in old["networkInterfaces"]] == ["efa"] * 4
    assert "capacityReservationSpecification" not in old  # on_demand group
    inv = run.outputs["ansible_inventory"]["compute"]
    assert [h["name"] for h in inv if h["group"] == "old"] == [
        "aws-p5-train-old001",
        "aws-p5-train-old002",
    ]
    assert len(run.of_type("aws:ec2/instance:Instance")) == 16 + 2 + 2


@pytest.mark.integration
def test_existing_vpc_is_reused_not_created(tmp_path: Path) -> None:
    text = _variant(
        "aws-p5-efa-fsx",
        (
            "  colocation: cluster ",
            "  network: {existing_vpc_id: vpc-0abc, existing_subnet_ids: [subnet-0def]}\n"
            "  colocation: cluster ",
        ),
    )
    run = _run(text, tmp_path)
    for token in ("aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/natGateway:NatGateway"):
        assert run.of_type(token) == [], token
    assert {r.inputs["vpcId"] for r in run.of_type("aws:ec2/securityGroup:SecurityGroup")} == {
        "vpc-0abc"
    }
    lt = next(
        r for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("-gpu")
    )
    assert {n["subnetId"] for n in lt.inputs["networkInterfaces"]} == {"subnet-0def"}
    fsx = run.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert {f.inputs["subnetIds"] for f in fsx} == {"subnet-0def"}


def test_dry_run_config_uses_defaults_and_mocks_required_keys(tmp_path: Path) -> None:
    from archform.verify.pulumi_projects import dry_run_config

    write_tree(tmp_path / "out", build_files(load_text(_variant("azure-nd-h100-v5"))))
    config, mocked = dry_run_config(tmp_path / "out" / "pulumi")
    assert mocked == ["sshPublicKey"]
    assert config["sshPublicKey"] == "mock-sshPublicKey"
    assert config["adminUsername"] == "azureuser"


@pytest.mark.integration
@pytest.mark.parametrize(
    ("purchase", "market", "reservation"),
    [
        (
            "reserved\n  capacity_reservation_id: cr-0123456789abcdef0",
            None,
            {"capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}},
        ),
        ("reserved", None, {"capacityReservationPreference": "open"}),
        ("spot", {"marketType": "spot"}, None),
        ("on_demand", None, None),
    ],
)
def test_aws_purchase_options_reach_the_launch_template(
    purchase: str, market: Any, reservation: Any, tmp_path: Path
) -> None:
    text = _variant("aws-p5-efa-fsx", ("purchase: capacity_block ", f"purchase: {purchase}\n  #"))
    run = _run(text, tmp_path)
    lt = next(
        r for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("-gpu")
    )
    assert lt.inputs.get("instanceMarketOptions") == market
    assert lt.inputs.get("capacityReservationSpecification") == reservation
    groups = run.of_type("aws:ec2/placementGroup:PlacementGroup")
    if "capacity_reservation_id" in purchase:
        # A targeted reservation places its nodes itself: no second placement group on top
        # (issue 22; ParallelCluster's PlacementGroupCapacityTypeValidator, AWS's p5 configs).
        assert groups == []
        assert "groupName" not in (lt.inputs.get("placement") or {})
        return
    # Otherwise (no Capacity Block, no targeted reservation) the cluster placement group.
    (pg,) = groups
    assert pg.inputs["strategy"] == "cluster"
    assert lt.inputs["placement"]["groupName"] == pg.inputs.get("name", pg.name)


@pytest.mark.integration
@pytest.mark.parametrize(("zone", "fails"), [("us-east-1b", True), ("us-east-1a", False)])
def test_reservation_in_another_zone_stops_the_program(
    zone: str, fails: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # EC2 reads the reservation (DescribeCapacityReservations); the mock answers with `zone`,
    # as AWS would for a block bought there. The subnet is in the blueprint's us-east-1a.
    require_module("pulumi", "pulumi_aws")
    from archform.verify import pulumi_mock

    token = "aws:ec2/capacityReservation:CapacityReservation"
    monkeypatch.setitem(
        pulumi_mock._TYPE_OUTPUTS, token, lambda name, inputs: {"availabilityZone": zone}
    )
    text = _variant("aws-p5-efa-fsx")
    assert "zones: [us-east-1a]" in text
    if fails:
        with pytest.raises(pulumi_mock.MockProgramError, match=r"placement.zones: \[us-east-1b\]"):
            _run(text, tmp_path)
    else:
        run = _run(text, tmp_path)
        (read,) = run.of_type(token)
        assert read.name.endswith("-gpu-reservation")


def test_azure_capacity_reservation_group_is_refused_at_its_line(tmp_path: Path) -> None:
    # Uniform scale sets join a capacity reservation group only with singlePlacementGroup=false
    # (learn.microsoft.com capacity-reservation-associate-virtual-machine-scale-set), and
    # InfiniBand needs a single placement group.
    text = _variant(
        "azure-nd-h100-v5",
        ("  purchase: reserved\n", "  purchase: reserved\n  capacity_reservation_id: crg-1\n"),
    )
    blueprint = tmp_path / "crg.yaml"
    blueprint.write_text(text, "utf-8")
    line = text.splitlines().index("  capacity_reservation_id: crg-1") + 1
    result = run_cli(["validate", str(blueprint)], cwd=tmp_path)
    assert result.returncode == 2
    (only,) = result.stderr.strip().splitlines()
    assert only.startswith(f"{blueprint}:{line}:3: error: compute.capacity_reservation_id: ")
    assert "singlePlacementGroup=false" in only and "hint: remove capacity_reservation_id" in only


def test_gcp_labels_are_sanitised_from_the_owner() -> None:
    from archform.providers.gcp.render.training import settings

    text = _variant("gcp-a3-mega-tcpxo", ("owner: ml-infra", "owner: ML Infra@Corp"))
    cluster = load_text(text).documents[0].model
    values, _, _ = settings(cluster)  # type: ignore[arg-type]
    assert values["LABELS"]["owner"] == "ml_infra_corp"
    assert values["TAGS"]["owner"] == "ML Infra@Corp"

"""Generated Pulumi programs run under mocks with the real SDKs and carry the fabric facts."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import pulumi_cases as pc
import pytest

from archform.render.targets.common.training_view import training_view
from archform.spec.catalog import load_catalog
from support import GOLDENS, compare_tree, require_module

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SDK = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "azure": "pulumi_azure_native"}
OPEN = {"0.0.0.0/0", "::/0", "*", "Internet", "any"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_module("pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native")
    root = str(tmp_path_factory.mktemp("pulumi-runs"))
    return {stem: pc.mock_run(stem, name, root) for stem, name in pc.CLOUD_CLUSTERS}


def _case(stem: str) -> pc.Case:
    return pc.case(stem, dict(pc.CLOUD_CLUSTERS)[stem])


def _aws_stems() -> list[str]:
    return [s for s, _ in pc.CLOUD_CLUSTERS if _case(s).cluster.placement.provider == "aws"]


# ---------------------------------------------------------------- AWS


@pytest.mark.parametrize("stem", _aws_stems())
def test_p5_launch_template_has_32_efa_cards_with_ena_primary(
    runs: dict[str, Any], stem: str
) -> None:
    run = runs[stem]
    cluster = _case(stem).cluster
    (lt,) = [
        r for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("-gpu")
    ]
    nics = lt.inputs["networkInterfaces"]
    info = load_catalog().instance(cluster.compute.instance_type or "")
    assert info is not None and info.fabric_interfaces == 32
    efa = [n for n in nics if n["interfaceType"] in ("efa", "efa-only")]
    assert len(efa) == 32
    assert len({n["networkCardIndex"] for n in efa}) == 32
    primary = [n for n in nics if n["networkCardIndex"] == 0 and n["deviceIndex"] == 0]
    assert [p["interfaceType"] for p in primary] == ["interface"]
    pairs = [(n["networkCardIndex"], n["deviceIndex"]) for n in nics]
    assert len(pairs) == len(set(pairs)) == 33
    # Security groups per interface, never at the top level of the template.
    assert "vpcSecurityGroupIds" not in lt.inputs and "securityGroupNames" not in lt.inputs
    (cluster_sg,) = [
        r for r in run.of_type("aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-cluster")
    ]
    for nic in nics:
        assert f"{cluster_sg.name}-id" in nic["securityGroups"], nic


@pytest.mark.parametrize("stem", _aws_stems())
def test_efa_security_group_allows_all_traffic_to_and_from_itself(
    runs: dict[str, Any], stem: str
) -> None:
    run = runs[stem]
    (sg,) = [
        r for r in run.of_type("aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-cluster")
    ]
    for kind in ("Ingress", "Egress"):
        rules = [
            r.inputs
            for r in run.of_type(f"aws:vpc/securityGroup{kind}Rule:SecurityGroup{kind}Rule")
            if r.inputs["securityGroupId"] == f"{sg.name}-id"
        ]
        assert rules == [
            {**rules[0], "ipProtocol": "-1", "referencedSecurityGroupId": f"{sg.name}-id"}
        ], kind


@pytest.mark.parametrize("stem", _aws_stems())
def test_capacity_block_nodes_get_no_placement_group(runs: dict[str, Any], stem: str) -> None:
    # A Capacity Block is co-located already; a cluster placement group on top makes launches
    # fail with insufficient capacity while the block has room (aws-parallelcluster
    # PlacementGroupCapacityTypeValidator; eksctl issue 7949). The bundled AWS blueprints buy
    # blocks; the on-demand case is in test_pulumi_variants.
    assert _case(stem).cluster.compute.purchase == "capacity_block"
    run = runs[stem]
    assert run.of_type("aws:ec2/placementGroup:PlacementGroup") == []
    (lt,) = [
        r for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("-gpu")
    ]
    assert "groupName" not in lt.inputs["placement"]


@pytest.mark.parametrize("stem", _aws_stems())
def test_fsx_without_s3_link_keeps_automatic_backups(runs: dict[str, Any], stem: str) -> None:
    # CreateFileSystemLustreConfiguration: AutomaticBackupRetentionDays "The default is 0".
    cluster = _case(stem).cluster
    fsx = {
        r.name: r.inputs for r in runs[stem].of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    }
    unlinked = [
        s
        for s in cluster.storage
        if s.kind == "lustre" and not s.source and s.deployment != "scratch"
    ]
    assert unlinked, "the bundled blueprint has a persistent file system with no S3 link"
    for s in cluster.storage:
        if s.kind != "lustre":
            continue
        days = fsx[f"{cluster.name}-{s.name}"].get("automaticBackupRetentionDays", 0)
        assert (days > 0) == (s in unlinked), s.name


@pytest.mark.parametrize("stem", _aws_stems())
def test_fsx_matches_blueprint_tier_and_deployment(runs: dict[str, Any], stem: str) -> None:
    run = runs[stem]
    cluster = _case(stem).cluster
    fsx = {r.name: r.inputs for r in run.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")}
    lustre = [s for s in cluster.storage if s.kind == "lustre"]
    assert len(fsx) == len(lustre)
    for s in lustre:
        fs = fsx[f"{cluster.name}-{s.name}"]
        assert fs["deploymentType"] == (
            "SCRATCH_2" if s.deployment == "scratch" else "PERSISTENT_2"
        )
        assert fs["perUnitStorageThroughput"] == s.throughput_mbps_per_tib
        assert fs["storageCapacity"] >= s.capacity_tib * 1024
        assert fs["storageCapacity"] % 2400 == 0
        assert fs["fileSystemTypeVersion"] == "2.15"
        assert isinstance(fs["subnetIds"], str)  # pulumi-aws v7: one subnet id, not a list
    dras = run.of_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")
    assert sorted(d.inputs["dataRepositoryPath"] for d in dras) == sorted(
        s.source for s in lustre if s.source
    )


@pytest.mark.parametrize("stem", _aws_stems())
def test_imdsv2_required_and_volumes_encrypted(runs: dict[str, Any], stem: str) -> None:
    run = runs[stem]
    lts = run.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert lts
    for lt in lts:
        assert lt.inputs["metadataOptions"]["httpTokens"] == "required"
        assert lt.inputs["metadataOptions"]["httpPutResponseHopLimit"] <= 2
        devices = lt.inputs["blockDeviceMappings"]
        assert devices and all(d["ebs"]["encrypted"] == "true" for d in devices)
    for efs in run.of_type("aws:efs/fileSystem:FileSystem"):
        assert efs.inputs["encrypted"] is True
    # Every instance comes from a launch template (so inherits both settings).
    assert all("launchTemplate" in i.inputs for i in run.of_type("aws:ec2/instance:Instance"))


@pytest.mark.parametrize("stem", _aws_stems())
def test_capacity_block_is_targeted(runs: dict[str, Any], stem: str) -> None:
    run = runs[stem]
    assert _case(stem).cluster.compute.purchase == "capacity_block"
    (lt,) = [
        r for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("-gpu")
    ]
    assert lt.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
    target = lt.inputs["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target["capacityReservationId"] == "mock-gpuCapacityReservationId"


@pytest.mark.parametrize("stem", _aws_stems())
def test_node_role_has_only_ssm(runs: dict[str, Any], stem: str) -> None:
    run = runs[stem]
    attachments = [
        r.inputs["policyArn"]
        for r in run.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    ]
    assert attachments == ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"]
    inline = run.of_type("aws:iam/rolePolicy:RolePolicy")
    if stem != "platform-two-tier":
        assert not inline
        return
    # A Platform's training nodes may assume the registry's writer role, and nothing else.
    (policy,) = inline
    statements = json.loads(policy.inputs["policy"])["Statement"]
    assert [s["Action"] for s in statements] == ["sts:AssumeRole"]
    assert all("registry-writer" in str(s["Resource"]) for s in statements)


# ---------------------------------------------------------------- GCP


def test_a3_mega_gets_nine_networks_with_mtu_8244(runs: dict[str, Any]) -> None:
    run = runs["gcp-a3-mega-tcpxo"]
    networks = run.of_type("gcp:compute/network:Network")
    assert len(networks) == 9
    assert {n.inputs["mtu"] for n in networks} == {8244}
    assert all(n.inputs["autoCreateSubnetworks"] is False for n in networks)
    cluster = _case("gcp-a3-mega-tcpxo").cluster
    gpus = [i for i in run.of_type("gcp:compute/instance:Instance") if "-gpu" in i.name]
    assert len(gpus) == cluster.compute.nodes
    for inst in gpus:
        nics = inst.inputs["networkInterfaces"]
        assert len(nics) == 9
        assert {n["nicType"] for n in nics} == {"GVNIC"}
        assert len({n["subnetwork"] for n in nics}) == 9
        assert inst.inputs["scheduling"]["onHostMaintenance"] == "TERMINATE"
        assert inst.inputs["resourcePolicies"] == f"https://mock/{cluster.name}-compact"


def test_a3_mega_compact_placement_and_managed_lustre(runs: dict[str, Any]) -> None:
    run = runs["gcp-a3-mega-tcpxo"]
    cluster = _case("gcp-a3-mega-tcpxo").cluster
    (policy,) = run.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"] == {
        "collocation": "COLLOCATED",
        "vmCount": cluster.compute.nodes,
    }
    lustre = {r.name: r.inputs for r in run.of_type("gcp:lustre/instance:Instance")}
    for s in cluster.storage:
        if s.kind == "lustre":
            fs = lustre[f"{cluster.name}-{s.name}"]
            assert fs["perUnitStorageThroughput"] == str(s.throughput_mbps_per_tib)
            assert int(fs["capacityGib"]) >= s.capacity_tib * 1024
    (filestore,) = run.of_type("gcp:filestore/instance:Instance")
    assert filestore.inputs["fileShares"]["capacityGb"] >= 2560


# ---------------------------------------------------------------- Azure


def test_azure_one_scale_set_single_placement_group(runs: dict[str, Any]) -> None:
    run = runs["azure-nd-h100-v5"]
    cluster = _case("azure-nd-h100-v5").cluster
    (vmss,) = run.of_type("azure-native:compute:VirtualMachineScaleSet")
    inputs = vmss.inputs
    assert inputs["singlePlacementGroup"] is True
    assert inputs["platformFaultDomainCount"] == 1
    assert inputs["overprovision"] is False
    assert inputs["sku"]["name"] == "Standard_ND96isr_H100_v5"
    assert inputs["sku"]["capacity"] == cluster.compute.nodes
    assert inputs["virtualMachineProfile"]["securityProfile"]["encryptionAtHost"] is True
    for vm in run.of_type("azure-native:compute:VirtualMachine"):
        assert vm.inputs["securityProfile"]["encryptionAtHost"] is True
    amlfs = {r.name: r.inputs for r in run.of_type("azure-native:storagecache:AmlFilesystem")}
    for s in cluster.storage:
        if s.kind == "lustre":
            fs = amlfs[f"{cluster.name}-{s.name}"]
            assert fs["sku"]["name"] == f"AMLFS-Durable-Premium-{s.throughput_mbps_per_tib}"
            assert fs["storageCapacityTiB"] >= s.capacity_tib
    (account,) = run.of_type("azure-native:storage:StorageAccount")
    assert account.inputs["encryption"]["requireInfrastructureEncryption"] is True
    assert account.inputs["networkRuleSet"]["defaultAction"] == "Deny"


# ---------------------------------------------------------------- every cloud


def _ingress_sources(run: Any) -> list[tuple[str, str, str]]:
    """(resource, port description, source) of every inbound allow rule in the program."""
    out: list[tuple[str, str, str]] = []
    for r in run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"):
        for key in ("cidrIpv4", "cidrIpv6"):
            if key in r.inputs:
                out.append((r.name, str(r.inputs.get("fromPort")), r.inputs[key]))
    for r in run.of_type("aws:ec2/securityGroup:SecurityGroup"):
        for rule in r.inputs.get("ingress", []):
            for cidr in rule.get("cidrBlocks", []) + rule.get("ipv6CidrBlocks", []):
                out.append((r.name, str(rule.get("fromPort")), cidr))
    for r in run.of_type("gcp:compute/firewall:Firewall"):
        if r.inputs.get("direction", "INGRESS") == "INGRESS" and r.inputs.get("allows"):
            for cidr in r.inputs.get("sourceRanges", []):
                out.append((r.name, str(r.inputs["allows"]), cidr))
    for r in run.of_type("azure-native:network:NetworkSecurityGroup"):
        for rule in r.inputs.get("securityRules", []):
            if rule["direction"] == "Inbound" and rule["access"] == "Allow":
                sources = rule.get("sourceAddressPrefixes") or [rule.get("sourceAddressPrefix")]
                for cidr in sources:
                    out.append((r.name, str(rule.get("destinationPortRange")), str(cidr)))
    return out


@pytest.mark.parametrize("stem", pc.IDS)
def test_no_rule_opens_anything_to_the_internet(runs: dict[str, Any], stem: str) -> None:
    run = runs[stem]
    cluster = _case(stem).cluster
    sources = _ingress_sources(run)
    assert sources, "expected at least the SSH and internal rules"
    allowed = {str(ipaddress.ip_network(c)) for c in cluster.access.ssh_cidrs}
    net_spec = cluster.placement.network
    internal = ipaddress.ip_network(net_spec.cidr)
    # GCP GPU VPCs and RDMA subnets: carved from gpu_cidr / rdma_cidr (spec.networks)
    gpu_blocks = [ipaddress.ip_network(c) for c in (net_spec.gpu_cidr, net_spec.rdma_cidr)]
    for name, port, cidr in sources:
        assert cidr not in OPEN, (name, port, cidr)
        net = ipaddress.ip_network(cidr)
        assert net.prefixlen > 0, (name, cidr)
        assert (
            cidr in allowed
            or net.subnet_of(internal)  # type: ignore[arg-type]
            or any(net.subnet_of(b) for b in gpu_blocks)  # type: ignore[arg-type]
        ), (name, port, cidr)


@pytest.mark.parametrize("stem", pc.IDS)
def test_inventory_output_matches_training_view(runs: dict[str, Any], stem: str) -> None:
    run = runs[stem]
    cluster = _case(stem).cluster
    view = training_view(cluster)
    inv = run.outputs["ansible_inventory"]
    assert set(inv) == {"controller", "login", "compute", "lustre", "nfs", "scale_sets", "ssh_user"}
    assert inv["ssh_user"], "Ansible needs the user to log in as"
    assert [h["name"] for h in inv["controller"]] == [view.controller]
    assert [h["name"] for h in inv["login"]] == view.login
    assert [h["name"] for h in inv["compute"]] == view.all_hostnames
    assert [h["group"] for h in inv["compute"]] == [
        g.name for g in view.groups for _ in g.hostnames
    ]
    # Scale-set groups (Azure) have their addresses read from the live scale set.
    scaled = {str(s["group"]) for s in inv["scale_sets"]}
    assert bool(scaled) is (cluster.placement.provider == "azure")
    for entry in inv["scale_sets"]:
        assert entry["name"] and entry["resource_group"], entry
        assert entry["hostnames"] == next(
            g.hostnames for g in view.groups if g.name == entry["group"]
        )
    for host in inv["controller"] + inv["login"] + inv["compute"]:
        assert set(host) <= {"name", "address", "group"}
        if host.get("group") in scaled:
            assert host["address"] is None, host
            continue
        assert isinstance(host["address"], str) and host["address"], host
    lustre = [s.name for s in cluster.storage if s.kind == "lustre"]
    nfs = [s.name for s in cluster.storage if s.kind == "nfs"]
    assert sorted(inv["lustre"]) == sorted(lustre)
    assert sorted(inv["nfs"]) == sorted(nfs)
    for target in inv["lustre"].values():
        assert set(target) == {"dns_name", "mount_name"} and all(target.values())
    for target in inv["nfs"].values():
        assert set(target) == {"address", "export"} and all(target.values())
        assert target["export"].startswith("/")


@pytest.mark.parametrize("stem", pc.IDS)
def test_mocked_stack_outputs_golden(runs: dict[str, Any], stem: str, update_goldens: bool) -> None:
    """The `pulumi stack output --json` file the Ansible inventory reads, as produced under mocks.

    Kept as a golden so the Ansible side can test its inventory script against the exact shape.
    """
    text = json.dumps(runs[stem].outputs, indent=2, sort_keys=True) + "\n"
    compare_tree(
        {"pulumi-outputs.json": text.encode()},
        GOLDENS / "pulumi-outputs" / stem,
        update_goldens,
    )

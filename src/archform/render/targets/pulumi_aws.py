"""Target pulumi-aws: a TrainingCluster on EC2 with EFA, FSx for Lustre and EFS."""

from __future__ import annotations

from typing import Any

from archform.render.targets.node_image import (
    cluster_image,
    head_reference,
    image_reference,
)
from archform.render.targets.pulumi_common import (
    ConfigKey,
    base_settings,
    carve,
    lustre_entries,
    make_target,
    nfs_entries,
    round_up,
    zone_of,
)
from archform.spec import UsageError
from archform.spec.catalog import load_catalog
from archform.spec.models.training import NodeGroup, TrainingCluster

# PERSISTENT_2 throughput tiers (MB/s/TiB), FSx Lustre guide, managing-throughput-capacity.
FSX_TIERS = (125, 250, 500, 1000)
# SCRATCH_2 / PERSISTENT_2 SSD: 1,200 or 2,400 GiB, then multiples of 2,400 GiB
# (FSx API UpdateFileSystem StorageCapacity; training-clusters.md s4).
FSX_STEP_GIB = 2400
HEAD_INSTANCE_TYPE = "m6i.2xlarge"
# Node images come from archform's image table (spec/data/images.yaml): GPU nodes boot the
# image chosen for the blueprint, head nodes plain Ubuntu of the same release, both resolved
# by EC2 from public SSM parameters at launch; override with `pulumi config set`.
# Families whose network cards each carry one EFA at device 0 (p4d: 4 x 100G, EFA guide).
EFA_PER_CARD = ("p4d", "p4de")

MODULES = ["__main__.py", "network.py", "iam.py", "compute.py", "storage.py"]


def network_cards(instance_type: str | None) -> list[dict[str, Any]]:
    """The launch-template interface layout for an instance type (catalog fabric facts).

    Multi-card EFA types (p5, p5e, p5en, p6): the primary interface (card 0, device 0) is
    ENA (`interface`; EFA-only cannot be primary), then `efa-only` on card 0 device 1 and
    on device 0 of every other card: one EFA per card. p4d/p4de: `efa` (EFA with ENA) on
    device 0 of each of the 4 cards. Single-EFA types: one `efa`. Others: one ENA.
    Source: EC2 user guide efa-acc-inst-types; training-clusters.md s5.
    """
    info = load_catalog().instance(instance_type) if instance_type else None
    if info is None or info.fabric_kind != "efa" or info.fabric_interfaces < 1:
        return [{"network_card_index": 0, "device_index": 0, "interface_type": "interface"}]
    cards = info.fabric_interfaces
    family = info.name.split(".", 1)[0]
    if cards == 1:
        return [{"network_card_index": 0, "device_index": 0, "interface_type": "efa"}]
    if family in EFA_PER_CARD:
        return [
            {"network_card_index": i, "device_index": 0, "interface_type": "efa"}
            for i in range(cards)
        ]
    layout = [
        {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
        {"network_card_index": 0, "device_index": 1, "interface_type": "efa-only"},
    ]
    layout += [
        {"network_card_index": i, "device_index": 0, "interface_type": "efa-only"}
        for i in range(1, cards)
    ]
    return layout


def _group(cluster: TrainingCluster, group: NodeGroup, hostnames: list[str]) -> dict[str, Any]:
    if group.instance_type is None:
        raise UsageError(
            f"{cluster.name}: node group {group.name!r} has no instance_type",
            "cloud clusters need compute.instance_type (an EC2 type such as p5.48xlarge)",
        )
    market = {"spot": "spot", "capacity_block": "capacity-block"}.get(group.purchase)
    return {
        "name": group.name,
        "instance_type": group.instance_type,
        "hostnames": hostnames,
        "purchase": group.purchase,
        "market_type": market,
        "capacity_reservation_id": group.capacity_reservation_id,
        "network_cards": network_cards(group.instance_type),
        "root_volume_gib": 500,
    }


def _lustre(cluster: TrainingCluster) -> list[dict[str, Any]]:
    out = []
    for s in lustre_entries(cluster):
        scratch = s.deployment == "scratch"
        tier = s.throughput_mbps_per_tib or 250
        if not scratch and tier not in FSX_TIERS:
            raise UsageError(
                f"{cluster.name}: storage {s.name!r}: FSx for Lustre PERSISTENT_2 has no "
                f"{tier} MB/s/TiB tier",
                "set throughput_mbps_per_tib to 125, 250, 500 or 1000",
            )
        capacity = s.capacity_tib * 1024
        gib = 1200 if capacity <= 1200 else round_up(capacity, FSX_STEP_GIB)
        source = s.source if s.source and s.source.startswith("s3://") else None
        if s.source and source is None:
            raise UsageError(
                f"{cluster.name}: storage {s.name!r}: FSx for Lustre links to S3 only, "
                f"not {s.source.split('://')[0]}://",
                "use an s3:// source or drop `source`",
            )
        out.append(
            {
                "name": s.name,
                "deployment_type": "SCRATCH_2" if scratch else "PERSISTENT_2",
                "per_unit_storage_throughput": None if scratch else tier,
                "storage_capacity_gib": gib,
                "source": source,
                "export_to_source": s.purpose != "training_data",
                "mount": s.mount,
            }
        )
    return out


def settings(cluster: TrainingCluster) -> tuple[dict[str, Any], list[ConfigKey], list[str]]:
    """settings.py values, config keys and README notes for one cluster."""
    from archform.render.view import training_view

    view = training_view(cluster)
    net = cluster.placement.network
    private_cidr, public_cidr = carve(net.cidr, 4)[:2]
    groups = [
        _group(cluster, g, v["hostnames"])
        for g, v in zip(cluster.compute.groups, view["groups"], strict=True)
    ]
    values = base_settings(cluster)
    values.update(
        {
            "ZONE": zone_of(cluster, f"{cluster.placement.primary_region}a"),
            "VPC_CIDR": net.cidr,
            "PRIVATE_CIDR": private_cidr,
            "PUBLIC_CIDR": public_cidr,
            "EXISTING_VPC_ID": net.existing_vpc_id,
            "EXISTING_SUBNET_IDS": list(net.existing_subnet_ids),
            "PLACEMENT_STRATEGY": "cluster" if cluster.placement.colocation == "cluster" else None,
            "HEAD_INSTANCE_TYPE": cluster.scheduler.controller_instance_type or HEAD_INSTANCE_TYPE,
            "GROUPS": groups,
            "LUSTRE": _lustre(cluster),
            "NFS": [{"name": s.name, "mount": s.mount} for s in nfs_entries(cluster)],
        }
    )
    if net.existing_vpc_id and not net.existing_subnet_ids:
        raise UsageError(
            f"{cluster.name}: placement.network.existing_vpc_id needs existing_subnet_ids",
            "list the private subnet id(s) in the cluster's zone",
        )
    config = [
        ConfigKey(
            "gpuImageId",
            f"AMI for GPU nodes (archform image {cluster_image(cluster).id})",
            image_reference(cluster),
        ),
        ConfigKey("headImageId", "AMI for the controller and login nodes", head_reference(cluster)),
        ConfigKey(
            "keyName",
            "EC2 key pair name for SSH; Ansible connects over SSH (empty: no key pair)",
            "",
        ),
    ]
    needs_reservation = False
    for g in groups:
        key = f"{g['name']}CapacityReservationId"
        if g["purchase"] == "capacity_block":
            needs_reservation = True
            config.append(
                ConfigKey(
                    key,
                    "Capacity Block reservation id (cr-...) of the node group in the key's name",
                    g["capacity_reservation_id"],
                )
            )
        elif g["purchase"] == "reserved":
            config.append(
                ConfigKey(
                    key,
                    "On-Demand Capacity Reservation id of the node group in the key's name "
                    "(empty: use any open matching reservation)",
                    g["capacity_reservation_id"] or "",
                )
            )
    notes = [
        "Every EFA interface carries the cluster security group (all traffic to and from itself); "
        "the primary interface also carries the SSH group (access.ssh_cidrs only) and the "
        "egress group (outbound through the NAT gateway).",
        "Instance metadata requires IMDSv2 tokens (hop limit 2, for containers); root volumes "
        "and FSx/EFS file systems are encrypted at rest.",
        "The node role gets only AmazonSSMManagedInstanceCore: FSx reads S3 through its own "
        "service role, so nodes need no bucket access.",
    ]
    if needs_reservation:
        notes.append(
            "Capacity Blocks: buy the block first (EC2 console or `aws ec2 "
            "purchase-capacity-block`), then set the reservation id config key before `pulumi up`."
        )
    return values, config, notes


TARGET = make_target("aws", settings, MODULES)

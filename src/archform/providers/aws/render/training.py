"""Target pulumi-aws: a TrainingCluster on EC2 with EFA, FSx for Lustre and EFS."""

from __future__ import annotations

from dataclasses import dataclass

from archform.render.targets.common.node_image import (
    cluster_image,
    head_reference,
    image_reference,
)
from archform.render.targets.common.pulumi import (
    ConfigKey,
    ProviderConfig,
    Settings,
    base_settings,
    carve,
    lustre_entries,
    make_target,
    nfs_entries,
    round_up,
    zone_of,
)
from archform.spec import BlueprintSet, Platform
from archform.spec.catalog import load_catalog
from archform.spec.models.training import NodeGroup, TrainingCluster

HEAD_INSTANCE_TYPE = "m6i.2xlarge"
BACKUP_RETENTION_DAYS = 7  # daily automatic FSx backups kept a week (API maximum 90)
# Node images come from archform's image table (spec/data/images.yaml): GPU nodes boot the
# image chosen for the blueprint, head nodes plain Ubuntu of the same release, both resolved
# by EC2 from public SSM parameters at launch; override with `pulumi config set`.
MODULES = ["__main__.py", "network.py", "iam.py", "compute.py", "storage.py"]
# Default user of every AMI archform launches (all Ubuntu: Canonical's server AMIs, DLAMI Ubuntu):
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/managing-users.html
SSH_USER = "ubuntu"


@dataclass(frozen=True, slots=True)
class NetworkCard:
    """One interface of the launch template (EC2 NetworkInterfaces entry)."""

    network_card_index: int
    device_index: int
    interface_type: str  # interface (ENA), efa (EFA with ENA) or efa-only


@dataclass(frozen=True, slots=True)
class AwsGroup:
    """One node group's instances (settings.py GROUPS entry)."""

    name: str
    instance_type: str
    hostnames: list[str]
    purchase: str
    market_type: str | None
    capacity_reservation_id: str | None
    placement_group: bool  # False for Capacity Blocks and targeted reservations (placed already)
    network_cards: list[NetworkCard]
    root_volume_gib: int


@dataclass(frozen=True, slots=True)
class FsxLustre:
    """One FSx for Lustre file system (settings.py LUSTRE entry)."""

    name: str
    deployment_type: str
    per_unit_storage_throughput: int | None
    storage_capacity_gib: int
    source: str | None
    export_to_source: bool
    backup_retention_days: int  # 0: no automatic backups
    mount: str | None


@dataclass(frozen=True, slots=True)
class EfsShare:
    """One EFS file system (settings.py NFS entry)."""

    name: str
    mount: str | None


def network_cards(instance_type: str | None) -> list[NetworkCard]:
    """The launch-template interface layout for an instance type (catalog fabric facts).

    Multi-card EFA types whose family has `efa_layout: ena_primary` in the catalog (p5,
    p5e, p5en, p6): the primary interface (card 0, device 0) is ENA (`interface`; EFA-only
    cannot be primary), then `efa-only` on card 0 device 1 and on device 0 of every other
    card. `efa_layout: per_card` (p4d/p4de): `efa` (EFA with ENA) on device 0 of each card.
    `even_odd` (p6e-gb200): `efa` on even card indices, `efa-only` on odd ones.
    Single-EFA types: one `efa`. Others: one ENA.
    Source: EC2 user guide efa-acc-inst-types.
    """
    info = load_catalog().instance(instance_type) if instance_type else None
    if info is None or info.fabric_kind != "efa" or info.fabric_interfaces < 1:
        return [NetworkCard(0, 0, "interface")]
    cards = info.fabric_interfaces
    if cards == 1:
        return [NetworkCard(0, 0, "efa")]
    if info.efa_layout == "even_odd":
        return [NetworkCard(i, 0, "efa" if i % 2 == 0 else "efa-only") for i in range(cards)]
    if info.efa_layout == "per_card":
        return [NetworkCard(i, 0, "efa") for i in range(cards)]
    layout = [
        NetworkCard(0, 0, "interface"),
        NetworkCard(0, 1, "efa-only"),
    ]
    layout += [NetworkCard(i, 0, "efa-only") for i in range(1, cards)]
    return layout


def _group(cluster: TrainingCluster, group: NodeGroup, hostnames: list[str]) -> AwsGroup:
    assert group.instance_type is not None, "checked by spec.buildable"
    market = {"spot": "spot", "capacity_block": "capacity-block"}.get(group.purchase)
    return AwsGroup(
        name=group.name,
        instance_type=group.instance_type,
        hostnames=hostnames,
        purchase=group.purchase,
        market_type=market,
        capacity_reservation_id=group.capacity_reservation_id,
        # A Capacity Block or a targeted capacity reservation is already placed; a
        # placement-group constraint on top causes insufficient-capacity errors with free
        # reserved capacity (ParallelCluster's PlacementGroupCapacityTypeValidator,
        # aws-parallelcluster PR 6311; NodeGroup.targets_reservation has the sources).
        # CPU groups (e.g. a debug queue) stay out of the GPU nodes' cluster placement group.
        placement_group=not group.targets_reservation and (group.gpu is not None),
        network_cards=network_cards(group.instance_type),
        root_volume_gib=500,
    )


def _lustre(cluster: TrainingCluster) -> list[FsxLustre]:
    """FSx for Lustre file systems; tiers and capacity steps from the catalog."""
    fsx = load_catalog().lustre["aws"]
    out = []
    for s in lustre_entries(cluster):
        scratch = s.deployment == "scratch"
        tier = s.throughput_mbps_per_tib or fsx.default_tier
        # SCRATCH_2 shares the PERSISTENT_2 capacity rule: 1,200 GiB, then 2,400 GiB steps.
        rule = fsx.tier(tier) or fsx.tiers[0]
        capacity = s.size_tib * 1024
        gib = rule.min_gib if capacity <= rule.min_gib else round_up(capacity, rule.step_gib)
        source = s.source
        out.append(
            FsxLustre(
                name=s.name,
                deployment_type="SCRATCH_2" if scratch else "PERSISTENT_2",
                per_unit_storage_throughput=None if scratch else tier,
                storage_capacity_gib=gib,
                source=source,
                export_to_source=s.purpose != "training_data",
                # The create API defaults to no automatic backups; a persistent file system
                # that is not backed by S3 holds the only copy (checkpoints, home).
                # https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateFileSystemLustreConfiguration.html
                backup_retention_days=0 if scratch or source else BACKUP_RETENTION_DAYS,
                mount=s.mount,
            )
        )
    return out


def settings(cluster: TrainingCluster) -> tuple[Settings, list[ConfigKey], list[str]]:
    """settings.py values, config keys and README notes for one cluster."""
    from archform.render.targets.common.training_view import training_view

    view = training_view(cluster)
    net = cluster.placement.network
    private_cidr, public_cidr = carve(net.cidr, 4)[:2]
    groups = [
        _group(cluster, g, v.hostnames)
        for g, v in zip(cluster.compute.groups, view.groups, strict=True)
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
            "PLACEMENT_STRATEGY": (
                "cluster"
                if cluster.placement.colocation == "cluster"
                and any(g.placement_group for g in groups)
                else None
            ),
            "HEAD_INSTANCE_TYPE": cluster.scheduler.controller_instance_type or HEAD_INSTANCE_TYPE,
            "GROUPS": groups,
            "LUSTRE": _lustre(cluster),
            "NFS": [EfsShare(s.name, s.mount) for s in nfs_entries(cluster)],
        }
    )
    config = [
        ConfigKey(
            "gpuImageId",
            f"AMI for GPU nodes (archform image {cluster_image(cluster).id})",
            image_reference(cluster),
        ),
        ConfigKey("headImageId", "AMI for the controller and login nodes", head_reference(cluster)),
        # Ansible reaches the nodes over SSH only: without a key pair no key is authorised on
        # the AMI's user, so the key is required rather than optional.
        ConfigKey("keyName", "EC2 key pair name; Ansible logs in over SSH with its key"),
        # Canonical's Ubuntu AMIs and the DLAMI Ubuntu AMIs log in as `ubuntu`
        # (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/managing-users.html).
        ConfigKey(
            "sshUser",
            "User Ansible logs in as (the AMIs' default user; Ubuntu AMIs: ubuntu)",
            SSH_USER,
        ),
    ]
    needs_reservation = False
    for g in groups:
        key = f"{g.name}CapacityReservationId"
        if g.purchase == "capacity_block":
            needs_reservation = True
            config.append(
                ConfigKey(
                    key,
                    "Capacity Block reservation id (cr-...) of the node group in the key's name",
                    g.capacity_reservation_id,
                )
            )
        elif g.purchase == "reserved":
            config.append(
                ConfigKey(
                    key,
                    "On-Demand Capacity Reservation id of the node group in the key's name "
                    "(empty: use any open matching reservation)",
                    g.capacity_reservation_id or "",
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
            "purchase-capacity-block`) in the zone settings.ZONE names, then set the reservation "
            "id config key before `pulumi up`; the program reads the reservation and stops when "
            "its zone differs (instances cannot launch outside the block's zone: "
            "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-launch.html). "
            "Capacity Block nodes get no placement group: the block is already co-located."
        )
    return values, config, notes


def registry_writer_roles(training: str, blueprints: BlueprintSet) -> Settings:
    """REGISTRY_WRITER_ROLES: the S3 registry writer roles of the Platforms it trains for.

    The Platform target names the role `<training>-registry-writer`; its trust policy names
    the account, so the nodes' role also needs an identity policy allowing sts:AssumeRole.
    """
    roles = {
        f"{d.model.training}-registry-writer"
        for d in blueprints.documents
        if isinstance(d.model, Platform)
        and d.model.training == training
        and d.model.registry.provider == "aws"
    }
    return {"REGISTRY_WRITER_ROLES": sorted(roles)}


def provider_config(settings: Settings) -> list[ProviderConfig]:
    """The region the aws provider deploys to."""
    return [ProviderConfig("aws:region", str(settings["REGION"]))]


TARGET = make_target("aws", settings, MODULES, provider_config, registry_writer_roles)

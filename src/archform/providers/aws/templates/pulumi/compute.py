"""Launch templates and instances: controller, login nodes and the EFA compute nodes.

Compute launch templates carry the instance type's exact network-card layout (settings.GROUPS
network_cards). Security groups are set per interface: EC2 rejects top-level security groups
in a launch template that defines interfaces.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

import settings as s
from network import Network

config = pulumi.Config()


def _config(key: str) -> str:
    """A config value, else the default from the blueprint (as in Pulumi.yaml), else ''."""
    return config.get(key) or s.CONFIG_DEFAULTS.get(key) or ""


# IMDSv2 only; hop limit 2 so containers on the node can still reach the metadata service.
METADATA = {
    "http_endpoint": "enabled",
    "http_tokens": "required",
    "http_put_response_hop_limit": 2,
    "instance_metadata_tags": "disabled",
}


@dataclass
class Nodes:
    """(name, private address[, group]) of every node, for the inventory."""

    controller: list[tuple[str, object]] = field(default_factory=list)
    login: list[tuple[str, object]] = field(default_factory=list)
    compute: list[tuple[str, object, str]] = field(default_factory=list)
    # The user Ansible logs in as (inventory ssh_user).
    ssh_user: str = ""


def _root_volume(size_gib: int) -> list[dict[str, object]]:
    return [
        {
            "device_name": "/dev/sda1",
            "ebs": {
                "volume_size": size_gib,
                "volume_type": "gp3",
                "encrypted": "true",
                "delete_on_termination": "true",
            },
        }
    ]


def _user_data(hostname: str) -> str:
    """cloud-init: the node's host name is its inventory name."""
    text = f"#cloud-config\nhostname: {hostname}\npreserve_hostname: false\n"
    return base64.b64encode(text.encode()).decode()


def _instance(name: str, template: aws.ec2.LaunchTemplate) -> aws.ec2.Instance:
    return aws.ec2.Instance(
        name,
        launch_template={"id": template.id, "version": template.latest_version.apply(str)},
        user_data_base64=_user_data(name),
        tags={**s.TAGS, "Name": name},
        volume_tags={**s.TAGS, "Name": name},
    )


def _head_template(net: Network, profile: aws.iam.InstanceProfile) -> aws.ec2.LaunchTemplate:
    return aws.ec2.LaunchTemplate(
        f"{s.CLUSTER}-head",
        image_id=_config("headImageId"),
        instance_type=s.HEAD_INSTANCE_TYPE,
        key_name=_config("keyName") or None,
        iam_instance_profile={"arn": profile.arn},
        metadata_options=METADATA,
        block_device_mappings=_root_volume(200),
        network_interfaces=[
            {
                "network_card_index": 0,
                "device_index": 0,
                "interface_type": "interface",
                "subnet_id": net.subnet_id,
                "security_groups": [net.cluster_sg.id, net.ssh_sg.id, net.egress_sg.id],
                "delete_on_termination": "true",
            }
        ],
        placement={"availability_zone": s.ZONE},
        tags=s.TAGS,
    )


def _check_zone(group: dict[str, Any], reservation: str) -> None:
    """Stop when a targeted reservation lies in another zone than the node subnet.

    EC2 launches a reservation's instances only in its own zone, and zone names map to
    different physical zones per account: the reservation itself is the only truth.
    https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-launch.html
    """
    found = aws.ec2.CapacityReservation.get(f"{s.CLUSTER}-{group['name']}-reservation", reservation)

    def same(zone: str | None) -> str | None:
        if zone and zone != s.ZONE:
            raise ValueError(
                f"node group {group['name']}: reservation {reservation} is in {zone}, the "
                f"cluster subnet in {s.ZONE}: set `placement.zones: [{zone}]` in the blueprint "
                "and generate again"
            )
        return zone

    found.availability_zone.apply(same)


def _market(group: dict[str, Any]) -> dict[str, object]:
    """Instance market and capacity reservation arguments for a node group's purchase."""
    args: dict[str, object] = {}
    if group["market_type"]:
        args["instance_market_options"] = {"market_type": group["market_type"]}
    if group["purchase"] in ("capacity_block", "reserved"):
        key = f"{group['name']}CapacityReservationId"
        reservation = _config(key)
        if group["purchase"] == "capacity_block" and not reservation:
            raise ValueError(
                f"node group {group['name']} buys a Capacity Block: "
                f"run `pulumi config set {key} cr-...` first"
            )
        if reservation:
            _check_zone(group, reservation)
            args["capacity_reservation_specification"] = {
                "capacity_reservation_target": {"capacity_reservation_id": reservation}
            }
        else:
            args["capacity_reservation_specification"] = {"capacity_reservation_preference": "open"}
    return args


def _compute_template(
    group: dict[str, Any], net: Network, profile: aws.iam.InstanceProfile
) -> aws.ec2.LaunchTemplate:
    interfaces = []
    for card in group["network_cards"]:
        primary = card["network_card_index"] == 0 and card["device_index"] == 0
        groups = [net.cluster_sg.id]
        if primary:
            groups += [net.ssh_sg.id, net.egress_sg.id]
        interfaces.append(
            {
                "network_card_index": card["network_card_index"],
                "device_index": card["device_index"],
                "interface_type": card["interface_type"],
                "subnet_id": net.subnet_id,
                "security_groups": groups,
                "delete_on_termination": "true",
            }
        )
    placement: dict[str, object] = {"availability_zone": s.ZONE}
    if net.placement_group is not None and group["placement_group"]:
        placement["group_name"] = net.placement_group.name
    return aws.ec2.LaunchTemplate(
        f"{s.CLUSTER}-{group['name']}",
        image_id=_config("gpuImageId"),
        instance_type=group["instance_type"],
        key_name=_config("keyName") or None,
        iam_instance_profile={"arn": profile.arn},
        metadata_options=METADATA,
        block_device_mappings=_root_volume(group["root_volume_gib"]),
        network_interfaces=interfaces,
        placement=placement,
        tags=s.TAGS,
        **_market(group),
    )


def build(net: Network, profile: aws.iam.InstanceProfile) -> Nodes:
    """Create every instance; names are the inventory names."""
    nodes = Nodes(ssh_user=_config("sshUser"))
    head = _head_template(net, profile)
    ctl = _instance(s.CONTROLLER, head)
    nodes.controller.append((s.CONTROLLER, ctl.private_ip))
    for name in s.LOGIN:
        login = _instance(name, head)
        nodes.login.append((name, login.private_ip))
    for group in s.GROUPS:
        template = _compute_template(group, net, profile)
        for name in group["hostnames"]:
            node = _instance(name, template)
            nodes.compute.append((name, node.private_ip, group["name"]))
    return nodes

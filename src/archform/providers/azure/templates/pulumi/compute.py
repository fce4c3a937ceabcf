"""Controller and login VMs, and one scale set per node group for the InfiniBand nodes.

Scale sets: Uniform orchestration, single placement group (one InfiniBand domain, at most
100 VMs), one fault domain, no overprovisioning (extra VMs would join the IB domain and
shift instance ids), manual upgrades (never reimage a training job's nodes behind its back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_azure_native as azure

import settings as s
from network import Network

config = pulumi.Config()


def _config(key: str) -> str:
    """A config value, else the default from the blueprint (as in Pulumi.yaml), else ''."""
    return config.get(key) or s.CONFIG_DEFAULTS.get(key) or ""


@dataclass
class Nodes:
    """(name, private address[, group]) of every node, and the scale sets, for the inventory."""

    controller: list[tuple[str, object]] = field(default_factory=list)
    login: list[tuple[str, object]] = field(default_factory=list)
    compute: list[tuple[str, object, str]] = field(default_factory=list)
    # The user Ansible logs in as (inventory ssh_user).
    ssh_user: str = ""
    scale_sets: list[dict[str, object]] = field(default_factory=list)


def _image() -> dict[str, str]:
    publisher, offer, sku, version = _config("image").split(":")
    return {"publisher": publisher, "offer": offer, "sku": sku, "version": version}


def _linux() -> dict[str, object]:
    user = _config("adminUsername")
    return {
        "disable_password_authentication": True,
        "ssh": {
            "public_keys": [
                {
                    "path": f"/home/{user}/.ssh/authorized_keys",
                    "key_data": config.require("sshPublicKey"),
                }
            ]
        },
    }


def _head(name: str, address: str, net: Network) -> None:
    nic = azure.network.NetworkInterface(
        f"{name}-nic",
        resource_group_name=net.group.name,
        location=s.REGION,
        enable_accelerated_networking=True,
        ip_configurations=[
            {
                "name": "primary",
                "primary": True,
                "subnet": {"id": net.compute_subnet.id},
                "private_ip_allocation_method": "Static",
                "private_ip_address": address,
            }
        ],
        tags=s.TAGS,
    )
    azure.compute.VirtualMachine(
        name,
        vm_name=name,
        resource_group_name=net.group.name,
        location=s.REGION,
        zones=[s.ZONE],
        hardware_profile={"vm_size": s.HEAD_VM_SIZE},
        os_profile={
            "computer_name": name,
            "admin_username": _config("adminUsername"),
            "linux_configuration": _linux(),
        },
        storage_profile={
            "image_reference": _image(),
            "os_disk": {
                "create_option": "FromImage",
                "caching": "ReadWrite",
                "disk_size_gb": 256,
                "delete_option": "Delete",
                "managed_disk": {"storage_account_type": "Premium_LRS"},
            },
        },
        network_profile={"network_interfaces": [{"id": nic.id, "primary": True}]},
        security_profile={"encryption_at_host": True},
        tags=s.TAGS,
    )


def _scale_set(group: dict[str, Any], net: Network) -> azure.compute.VirtualMachineScaleSet:
    profile: dict[str, object] = {
        "os_profile": {
            "computer_name_prefix": group["computer_name_prefix"],
            "admin_username": _config("adminUsername"),
            "linux_configuration": _linux(),
        },
        "storage_profile": {
            "image_reference": _image(),
            "os_disk": {
                "create_option": "FromImage",
                "caching": "ReadWrite",
                "disk_size_gb": 256,
                "managed_disk": {"storage_account_type": "Premium_LRS"},
            },
        },
        "network_profile": {
            "network_interface_configurations": [
                {
                    "name": "primary",
                    "primary": True,
                    "enable_accelerated_networking": True,
                    "ip_configurations": [
                        {
                            "name": "primary",
                            "primary": True,
                            "subnet": {"id": net.compute_subnet.id},
                        }
                    ],
                }
            ]
        },
        "security_profile": {"encryption_at_host": True},
    }
    if group["spot"]:
        profile["priority"] = "Spot"
        profile["eviction_policy"] = "Delete"
    return azure.compute.VirtualMachineScaleSet(
        f"{s.CLUSTER}-{group['name']}",
        resource_group_name=net.group.name,
        location=s.REGION,
        zones=[s.ZONE],
        sku={"name": group["vm_size"], "tier": "Standard", "capacity": group["nodes"]},
        orchestration_mode="Uniform",
        single_placement_group=True,
        platform_fault_domain_count=1,
        overprovision=False,
        upgrade_policy={"mode": "Manual"},
        virtual_machine_profile=profile,
        tags=s.TAGS,
    )


def build(net: Network) -> Nodes:
    """Create every VM and scale set."""
    nodes = Nodes(ssh_user=_config("adminUsername"))
    _head(s.CONTROLLER, s.CONTROLLER_ADDRESS, net)
    nodes.controller.append((s.CONTROLLER, s.CONTROLLER_ADDRESS))
    for name, address in zip(s.LOGIN, s.LOGIN_ADDRESSES, strict=True):
        _head(name, address, net)
        nodes.login.append((name, address))
    for group in s.GROUPS:
        vmss = _scale_set(group, net)
        # No address per node: the scale set may replace a VM (new instance id, computer name
        # and private address), so the inventory script reads the live instance list
        # (az vmss list-instances / az vmss nic list) for this scale set when it runs.
        for name in group["hostnames"]:
            nodes.compute.append((name, None, group["name"]))
        nodes.scale_sets.append(
            {
                "group": group["name"],
                "resource_group": net.group.name,
                "name": vmss.name,
                "hostnames": group["hostnames"],
            }
        )
    return nodes

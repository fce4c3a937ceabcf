"""Controller, login and GPU instances.

GPU instances: one NIC per network (system gVNIC first, then GPU gVNICs, then MRDMA),
`on_host_maintenance=TERMINATE` (GPU VMs cannot live-migrate), compact placement, static
internal addresses on the system subnet (the Ansible inventory names them). CPU node groups
(no GPUs, e.g. a debug partition) get the system NIC only, live-migrate and stay outside the
compact placement policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp

import settings as s
from network import Network

config = pulumi.Config()


def _config(key: str) -> str:
    """A config value, else the default from the blueprint (as in Pulumi.yaml), else ''."""
    return config.get(key) or s.CONFIG_DEFAULTS.get(key) or ""


@dataclass
class Nodes:
    """(name, private address[, group]) of every node, for the inventory."""

    controller: list[tuple[str, object]] = field(default_factory=list)
    login: list[tuple[str, object]] = field(default_factory=list)
    compute: list[tuple[str, object, str]] = field(default_factory=list)
    # The user Ansible logs in as (inventory ssh_user).
    ssh_user: str = ""


def _boot_disk(disk_type: str, size_gb: int) -> dict[str, object]:
    disk: dict[str, object] = {
        "auto_delete": True,
        "initialize_params": {"image": _config("image"), "size": size_gb, "type": disk_type},
    }
    if _config("kmsKeySelfLink"):
        disk["kms_key_self_link"] = _config("kmsKeySelfLink")
    return disk


def _common(name: str, account: gcp.serviceaccount.Account) -> dict[str, object]:
    return {
        "name": name,
        "zone": s.ZONE,
        "labels": s.LABELS,
        "metadata": {"enable-oslogin": "TRUE", "block-project-ssh-keys": "TRUE"},
        "shielded_instance_config": {"enable_integrity_monitoring": True, "enable_vtpm": True},
        "service_account": {
            "email": account.email,
            "scopes": ["https://www.googleapis.com/auth/cloud-platform"],
        },
        "allow_stopping_for_update": True,
    }


def _gpu_interfaces(net: Network, address: str) -> list[dict[str, object]]:
    nics: list[dict[str, object]] = [
        {"subnetwork": net.system_subnet.id, "network_ip": address, "nic_type": "GVNIC"}
    ]
    nics += [{"subnetwork": sub.id, "nic_type": "GVNIC"} for _, sub in net.gvnic]
    nics += [{"subnetwork": sub.id, "nic_type": "MRDMA"} for _, sub in net.rdma]
    return nics


def _interfaces(group: dict[str, Any], net: Network, address: str) -> list[dict[str, object]]:
    if group["gpu"]:
        return _gpu_interfaces(net, address)
    return [{"subnetwork": net.system_subnet.id, "network_ip": address}]


def _scheduling(group: dict[str, Any]) -> dict[str, object]:
    if group["purchase"] == "spot":
        return {
            "on_host_maintenance": "TERMINATE",
            "provisioning_model": "SPOT",
            "preemptible": True,
            "automatic_restart": False,
            "instance_termination_action": "DELETE",
        }
    if not group["gpu"]:
        return {"on_host_maintenance": "MIGRATE", "automatic_restart": True}
    return {"on_host_maintenance": "TERMINATE", "automatic_restart": True}


def _reservation(group: dict[str, Any]) -> dict[str, object] | None:
    if group["purchase"] != "reserved":
        return None
    name = _config(f"{group['name']}Reservation")
    if not name:
        return {"type": "ANY_RESERVATION"}
    return {
        "type": "SPECIFIC_RESERVATION",
        "specific_reservation": {
            "key": "compute.googleapis.com/reservation-name",
            "values": [name],
        },
    }


def build(net: Network) -> Nodes:
    """Create the service account, placement policy and every instance."""
    nodes = Nodes(ssh_user=_config("sshUser"))
    account = gcp.serviceaccount.Account(
        f"{s.CLUSTER}-node",
        account_id=f"{s.CLUSTER}-node"[:30],
        display_name="archform training cluster nodes (logging and monitoring only)",
    )
    project = gcp.organizations.get_client_config().project
    for role in ("roles/logging.logWriter", "roles/monitoring.metricWriter"):
        gcp.projects.IAMMember(
            f"{s.CLUSTER}-node-{role.split('/')[1]}",
            project=project,
            role=role,
            member=account.email.apply(lambda email: f"serviceAccount:{email}"),
        )

    head = [(s.CONTROLLER, s.CONTROLLER_ADDRESS, nodes.controller)]
    head += [(n, a, nodes.login) for n, a in zip(s.LOGIN, s.LOGIN_ADDRESSES, strict=True)]
    for name, address, bucket in head:
        gcp.compute.Instance(
            name,
            machine_type=s.HEAD_MACHINE_TYPE,
            boot_disk=_boot_disk("pd-balanced", 200),
            network_interfaces=[{"subnetwork": net.system_subnet.id, "network_ip": address}],
            scheduling={"on_host_maintenance": "MIGRATE", "automatic_restart": True},
            **_common(name, account),
        )
        bucket.append((name, address))

    total = sum(len(g["hostnames"]) for g in s.GROUPS if g["gpu"])
    policy = None
    if s.COLLOCATED and total:
        policy = gcp.compute.ResourcePolicy(
            f"{s.CLUSTER}-compact",
            region=s.REGION,
            group_placement_policy={"collocation": "COLLOCATED", "vm_count": total},
        )
    for group in s.GROUPS:
        for name, address in zip(group["hostnames"], group["addresses"], strict=True):
            gcp.compute.Instance(
                name,
                machine_type=group["machine_type"],
                boot_disk=_boot_disk(group["boot_disk_type"], 200),
                network_interfaces=_interfaces(group, net, address),
                scheduling=_scheduling(group),
                # One policy, a str (not a list) in pulumi-gcp 10.
                resource_policies=(
                    policy.self_link if policy is not None and group["gpu"] else None
                ),
                reservation_affinity=_reservation(group),
                **_common(name, account),
            )
            nodes.compute.append((name, address, group["name"]))
    return nodes

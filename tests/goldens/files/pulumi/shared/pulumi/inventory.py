"""The Pulumi -> Ansible handoff: the `ansible_inventory` stack output.

Shape (read by the generated Ansible inventory script):
    {"controller": [{"name", "address"}], "login": [{"name", "address"}],
     "compute": [{"name", "address", "group"}],
     "lustre": {"<storage name>": {"dns_name", "mount_name"}},
     "nfs": {"<storage name>": {"address", "export"}},
     "scale_sets": [{"group", "resource_group", "name", "hostnames"}],
     "ssh_user": "<user Ansible logs in as>"}
Addresses are private: Ansible reaches the nodes from inside the network or over a VPN.
`ssh_user` is the user Ansible logs in as (the inventory script's ansible_user).
Scale-set nodes (Azure) have no address here (null): a scale set replaces a VM under a new
instance id, name and address, so the inventory script lists the scale set's instances when it
runs and gives each live instance one of the group's Slurm host names.
Mounts: `mount -t lustre <dns_name>@tcp:/<mount_name> <dir>` and
`mount -t nfs <address>:<export> <dir>` (EFS and Azure Files speak NFS 4.1, Filestore Basic
NFS 3; the client negotiates).
"""

from __future__ import annotations

from typing import Any

import pulumi


def export_inventory(
    controller: list[tuple[str, Any]],
    login: list[tuple[str, Any]],
    compute: list[tuple[str, Any, str]],
    lustre: dict[str, tuple[Any, Any]],
    nfs: dict[str, tuple[Any, Any]],
    scale_sets: list[dict[str, Any]] | None = None,
    ssh_user: Any = None,
) -> None:
    """Export the inventory; values may be Pulumi Outputs (resolved by the engine)."""
    pulumi.export(
        "ansible_inventory",
        {
            "controller": [{"name": n, "address": a} for n, a in controller],
            "login": [{"name": n, "address": a} for n, a in login],
            "compute": [{"name": n, "address": a, "group": g} for n, a, g in compute],
            "lustre": {k: {"dns_name": d, "mount_name": m} for k, (d, m) in sorted(lustre.items())},
            "nfs": {k: {"address": a, "export": e} for k, (a, e) in sorted(nfs.items())},
            "scale_sets": scale_sets or [],
            "ssh_user": ssh_user or None,
        },
    )

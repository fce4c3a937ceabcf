"""Resource group, VNet, subnets (nodes; Managed Lustre gets its own), NSG and NAT gateway.

The NSG on the node subnet admits SSH only from access.ssh_cidrs (no rule when the list is
empty); Azure's default rules keep the rest of inbound traffic inside the VNet.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure

import settings as s


@dataclass
class Network:
    """What the other modules attach to."""

    group: azure.resources.ResourceGroup
    compute_subnet: azure.network.Subnet
    lustre_subnet: azure.network.Subnet


def build() -> Network:
    """Create the resource group and the network."""
    rg = azure.resources.ResourceGroup(f"{s.CLUSTER}-rg", location=s.REGION, tags=s.TAGS)
    rules = []
    if s.SSH_CIDRS:
        rules.append(
            {
                "name": "ssh-from-allowed-networks",
                "priority": 100,
                "direction": "Inbound",
                "access": "Allow",
                "protocol": "Tcp",
                "source_address_prefixes": s.SSH_CIDRS,
                "source_port_range": "*",
                "destination_address_prefix": "VirtualNetwork",
                "destination_port_range": "22",
                "description": "SSH from access.ssh_cidrs only",
            }
        )
    nsg = azure.network.NetworkSecurityGroup(
        f"{s.CLUSTER}-nodes",
        resource_group_name=rg.name,
        location=s.REGION,
        security_rules=rules,
        tags=s.TAGS,
    )
    nat_ip = azure.network.PublicIPAddress(
        f"{s.CLUSTER}-nat-ip",
        resource_group_name=rg.name,
        location=s.REGION,
        sku={"name": "Standard"},
        public_ip_allocation_method="Static",
        zones=[s.ZONE],
        tags=s.TAGS,
    )
    nat = azure.network.NatGateway(
        f"{s.CLUSTER}-nat",
        resource_group_name=rg.name,
        location=s.REGION,
        sku={"name": "Standard"},
        public_ip_addresses=[{"id": nat_ip.id}],
        zones=[s.ZONE],
        tags=s.TAGS,
    )
    vnet = azure.network.VirtualNetwork(
        f"{s.CLUSTER}-vnet",
        resource_group_name=rg.name,
        location=s.REGION,
        address_space={"address_prefixes": [s.VNET_CIDR]},
        tags=s.TAGS,
    )
    compute_subnet = azure.network.Subnet(
        f"{s.CLUSTER}-nodes",
        resource_group_name=rg.name,
        virtual_network_name=vnet.name,
        address_prefix=s.COMPUTE_CIDR,
        network_security_group={"id": nsg.id},
        nat_gateway={"id": nat.id},
        service_endpoints=[{"service": "Microsoft.Storage"}],
        default_outbound_access=False,
    )
    # Managed Lustre needs a subnet of its own. Subnets of one VNet are created one after the
    # other: parallel writes fail with AnotherOperationInProgress
    # (https://github.com/pulumi/pulumi-azure-native/issues/699).
    lustre_subnet = azure.network.Subnet(
        f"{s.CLUSTER}-lustre",
        resource_group_name=rg.name,
        virtual_network_name=vnet.name,
        address_prefix=s.LUSTRE_CIDR,
        nat_gateway={"id": nat.id},
        default_outbound_access=False,
        opts=pulumi.ResourceOptions(depends_on=[compute_subnet]),
    )
    return Network(rg, compute_subnet, lustre_subnet)

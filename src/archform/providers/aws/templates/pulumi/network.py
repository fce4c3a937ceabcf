"""VPC, subnets and security groups (or the existing VPC named in the blueprint).

Security groups:
- cluster: all traffic to and from itself (EFA requires it), on every interface of every node,
  on FSx and on EFS.
- ssh: TCP 22 from access.ssh_cidrs only; no rule at all when that list is empty.
- egress: outbound to anywhere, on primary interfaces, for package mirrors through NAT.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

import settings as s


@dataclass
class Network:
    """What the other modules attach to."""

    vpc_id: object
    subnet_id: object
    cluster_sg: aws.ec2.SecurityGroup
    ssh_sg: aws.ec2.SecurityGroup
    egress_sg: aws.ec2.SecurityGroup
    placement_group: aws.ec2.PlacementGroup | None


def _tags(name: str) -> dict[str, str]:
    return {**s.TAGS, "Name": name}


def _new_vpc() -> tuple[object, object]:
    vpc = aws.ec2.Vpc(
        f"{s.CLUSTER}-vpc",
        cidr_block=s.VPC_CIDR,
        enable_dns_support=True,
        enable_dns_hostnames=True,
        tags=_tags(f"{s.CLUSTER}-vpc"),
    )
    private = aws.ec2.Subnet(
        f"{s.CLUSTER}-private",
        vpc_id=vpc.id,
        cidr_block=s.PRIVATE_CIDR,
        availability_zone=s.ZONE,
        map_public_ip_on_launch=False,
        tags=_tags(f"{s.CLUSTER}-private"),
    )
    public = aws.ec2.Subnet(
        f"{s.CLUSTER}-public",
        vpc_id=vpc.id,
        cidr_block=s.PUBLIC_CIDR,
        availability_zone=s.ZONE,
        map_public_ip_on_launch=False,
        tags=_tags(f"{s.CLUSTER}-public"),
    )
    igw = aws.ec2.InternetGateway(f"{s.CLUSTER}-igw", vpc_id=vpc.id, tags=_tags(f"{s.CLUSTER}-igw"))
    eip = aws.ec2.Eip(f"{s.CLUSTER}-nat-ip", domain="vpc", tags=_tags(f"{s.CLUSTER}-nat-ip"))
    nat = aws.ec2.NatGateway(
        f"{s.CLUSTER}-nat",
        allocation_id=eip.id,
        subnet_id=public.id,
        tags=_tags(f"{s.CLUSTER}-nat"),
        opts=pulumi.ResourceOptions(depends_on=[igw]),
    )
    public_rt = aws.ec2.RouteTable(
        f"{s.CLUSTER}-public-rt",
        vpc_id=vpc.id,
        routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": igw.id}],
        tags=_tags(f"{s.CLUSTER}-public-rt"),
    )
    aws.ec2.RouteTableAssociation(
        f"{s.CLUSTER}-public-rta", subnet_id=public.id, route_table_id=public_rt.id
    )
    private_rt = aws.ec2.RouteTable(
        f"{s.CLUSTER}-private-rt",
        vpc_id=vpc.id,
        routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}],
        tags=_tags(f"{s.CLUSTER}-private-rt"),
    )
    aws.ec2.RouteTableAssociation(
        f"{s.CLUSTER}-private-rta", subnet_id=private.id, route_table_id=private_rt.id
    )
    # S3 traffic (FSx data repositories, container images) stays off the NAT gateway.
    aws.ec2.VpcEndpoint(
        f"{s.CLUSTER}-s3",
        vpc_id=vpc.id,
        service_name=f"com.amazonaws.{s.REGION}.s3",
        vpc_endpoint_type="Gateway",
        route_table_ids=[private_rt.id],
        tags=_tags(f"{s.CLUSTER}-s3"),
    )
    return vpc.id, private.id


def build() -> Network:
    """Create (or look up) the network and the security groups."""
    if s.EXISTING_VPC_ID:
        vpc_id, subnet_id = s.EXISTING_VPC_ID, s.EXISTING_SUBNET_IDS[0]
    else:
        vpc_id, subnet_id = _new_vpc()

    cluster_sg = aws.ec2.SecurityGroup(
        f"{s.CLUSTER}-cluster",
        vpc_id=vpc_id,
        description="Cluster and EFA traffic: all protocols between members only",
        tags=_tags(f"{s.CLUSTER}-cluster"),
    )
    aws.vpc.SecurityGroupIngressRule(
        f"{s.CLUSTER}-cluster-in-self",
        security_group_id=cluster_sg.id,
        referenced_security_group_id=cluster_sg.id,
        ip_protocol="-1",
        description="All traffic from cluster members (EFA, Slurm, Lustre, NFS)",
    )
    aws.vpc.SecurityGroupEgressRule(
        f"{s.CLUSTER}-cluster-out-self",
        security_group_id=cluster_sg.id,
        referenced_security_group_id=cluster_sg.id,
        ip_protocol="-1",
        description="All traffic to cluster members (EFA requires it)",
    )

    ssh_sg = aws.ec2.SecurityGroup(
        f"{s.CLUSTER}-ssh",
        vpc_id=vpc_id,
        description="SSH from access.ssh_cidrs only",
        tags=_tags(f"{s.CLUSTER}-ssh"),
    )
    for i, cidr in enumerate(s.SSH_CIDRS):
        family = {"cidr_ipv6": cidr} if ":" in cidr else {"cidr_ipv4": cidr}
        aws.vpc.SecurityGroupIngressRule(
            f"{s.CLUSTER}-ssh-in-{i}",
            security_group_id=ssh_sg.id,
            ip_protocol="tcp",
            from_port=22,
            to_port=22,
            description="SSH from an allowed network",
            **family,
        )

    egress_sg = aws.ec2.SecurityGroup(
        f"{s.CLUSTER}-egress",
        vpc_id=vpc_id,
        description="Outbound connections (package mirrors, AWS APIs); no inbound rules",
        tags=_tags(f"{s.CLUSTER}-egress"),
    )
    aws.vpc.SecurityGroupEgressRule(
        f"{s.CLUSTER}-egress-out-v4",
        security_group_id=egress_sg.id,
        cidr_ipv4="0.0.0.0/0",
        ip_protocol="-1",
        description="Outbound through the NAT gateway",
    )

    placement = None
    if s.PLACEMENT_STRATEGY:
        placement = aws.ec2.PlacementGroup(
            f"{s.CLUSTER}-pg",
            strategy=s.PLACEMENT_STRATEGY,
            tags=_tags(f"{s.CLUSTER}-pg"),
        )
    return Network(vpc_id, subnet_id, cluster_sg, ssh_sg, egress_sg, placement)

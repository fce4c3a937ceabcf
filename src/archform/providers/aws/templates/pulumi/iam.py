"""Node IAM role: SSM Session Manager only (least privilege).

FSx for Lustre reads and writes the S3 data repository with its own service-linked role,
so the nodes get no S3 permissions.
"""

from __future__ import annotations

import json

import pulumi_aws as aws

import settings as s

_ASSUME_EC2 = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "ec2.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    },
    sort_keys=True,
)


def build() -> aws.iam.InstanceProfile:
    """Role, SSM core policy attachment, instance profile."""
    role = aws.iam.Role(
        f"{s.CLUSTER}-node",
        assume_role_policy=_ASSUME_EC2,
        description="archform training cluster nodes",
        tags=s.TAGS,
    )
    if s.REGISTRY_WRITER_ROLES:
        # A Platform's registry writer role trusts this account for roles named like this
        # one; with the account as the trust policy's principal IAM also requires this
        # identity policy (https://docs.aws.amazon.com/IAM/latest/UserGuide/
        # reference_policies_elements_principal.html#principal-accounts).
        account = aws.get_caller_identity().account_id
        partition = aws.get_partition().partition
        aws.iam.RolePolicy(
            f"{s.CLUSTER}-node-registry-writer",
            role=role.id,
            policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "AssumeModelRegistryWriter",
                            "Effect": "Allow",
                            "Action": "sts:AssumeRole",
                            "Resource": [
                                f"arn:{partition}:iam::{account}:role/{name}"
                                for name in s.REGISTRY_WRITER_ROLES
                            ],
                        }
                    ],
                },
                sort_keys=True,
            ),
        )
    aws.iam.RolePolicyAttachment(
        f"{s.CLUSTER}-node-ssm",
        role=role.name,
        policy_arn=f"arn:{aws.get_partition().partition}:iam::aws:policy/AmazonSSMManagedInstanceCore",
    )
    return aws.iam.InstanceProfile(f"{s.CLUSTER}-node", role=role.name, tags=s.TAGS)

"""AWS in verify's Pulumi mock: ACM, Route 53, Global Accelerator, EKS, the partition."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from archform.verify.provider import MOCK_CA, ProviderVerify, VerifyBase


class AwsVerify(VerifyBase):
    """Placeholders for what AWS computes and the generated programs read."""

    mock_outputs = MappingProxyType(
        {
            # ACM's DNS validation record for the certificate's domain (one per domain).
            "aws:acm/certificate:Certificate": lambda name, inputs: {
                "domainValidationOptions": [
                    {
                        "domainName": inputs.get("domainName", ""),
                        "resourceRecordName": f"_mock.{inputs.get('domainName', '')}.",
                        "resourceRecordType": "CNAME",
                        "resourceRecordValue": "_mock.acm-validations.aws.",
                    }
                ]
            },
            "aws:route53/record:Record": lambda name, inputs: {
                "fqdn": str(inputs.get("name", name))
            },
            "aws:globalaccelerator/accelerator:Accelerator": lambda name, inputs: {
                "hostedZoneId": "Z2BJ6XQ5FK7U4H"
            },
            "aws:eks/cluster:Cluster": lambda name, inputs: {
                "certificateAuthority": {"data": MOCK_CA},
                "vpcConfig": dict(
                    inputs.get("vpcConfig") or {}, clusterSecurityGroupId=f"{name}-sg"
                ),
            },
        }
    )

    def mock_call(self, token: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The partition, and the NLB the fleet program looks up."""
        if token.startswith("aws:") and token.endswith("getPartition"):
            return {"partition": "aws", "dnsSuffix": "amazonaws.com"}
        if token == "aws:lb/getLoadBalancer:getLoadBalancer":
            arn = "arn:aws:elasticloadbalancing:mock:000000000000:loadbalancer/net/mock/0"
            return {"arn": arn, "dnsName": "mock-nlb.elb.mock.amazonaws.com"}
        return None


VERIFY: ProviderVerify = AwsVerify()

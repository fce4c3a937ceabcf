"""AWS fleet pieces: NLB Services behind Global Accelerator, S3 weight copies, EKS nodes."""

from __future__ import annotations

from shlex import quote as q

from archform.render.targets.kubernetes.provider import FleetProvider
from archform.render.targets.kubernetes.provider_base import FleetBase
from archform.render.targets.kubernetes.records import FleetView
from archform.render.targets.kubernetes.weights import MANIFEST, SUMS

# TLS 1.3 and 1.2 only, forward secrecy (the ELB policy AWS recommends for new listeners).
TLS_POLICY_AWS = "ELBSecurityPolicy-TLS13-1-2-2021-06"
_NLB = "service.beta.kubernetes.io/aws-load-balancer-"


class AwsFleet(FleetBase):
    """EKS: managed node groups, an internal NLB per region, S3 replicas."""

    # EKS managed node groups take several instance types for Spot
    # (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html, "Spot").
    spot_shapes = True
    # EKS (AL2023 nodeadm) puts kubelet and containerd on a RAID0 of the instance store.
    kubelet_on_nvme = True
    # Global Accelerator is a layer-4 proxy: TLS ends at the NLB's TLS listener.
    tls_at_service = True

    def service_exposure(self, v: FleetView) -> tuple[str, dict[str, str]]:
        """An internal NLB checking the model endpoint over HTTP."""
        annotations = {
            _NLB + "type": "nlb",
            # Internal even behind Global Accelerator, which reaches NLBs in private subnets
            # of a VPC with an internet gateway (https://docs.aws.amazon.com/
            # global-accelerator/latest/dg/about-endpoints.sipp-caveats.html), so the regions
            # are not reachable directly.
            _NLB + "internal": "true",
            # Global Accelerator uses the NLB's target-group health for NLB endpoints: check
            # the model endpoint over HTTP there (https://cloud-provider-aws.sigs.k8s.io/
            # service_controller/), not just that the port is open.
            _NLB + "healthcheck-protocol": "http",
            _NLB + "healthcheck-path": v.edge.health_path,
            _NLB + "healthcheck-port": "traffic-port",
        }
        if v.edge.tls:
            # TLS ends at the NLB's TLS listener, with the ACM certificate the program issues
            # for edge.domain (its ARN is added as aws-load-balancer-ssl-cert at deploy time)
            # and a TLS 1.2+ policy (https://cloud-provider-aws.sigs.k8s.io/service_controller/,
            # "ssl-cert", "ssl-ports", "ssl-negotiation-policy"; ELB security policies:
            # https://docs.aws.amazon.com/elasticloadbalancing/latest/network/describe-ssl-policies.html).
            annotations[_NLB + "ssl-ports"] = "https"
            annotations[_NLB + "ssl-negotiation-policy"] = TLS_POLICY_AWS
        return "LoadBalancer", annotations

    def fetch_command(self, uri: str) -> str:
        """`aws s3 sync` of the in-region copy."""
        return f"aws s3 sync --only-show-errors {q(uri)} /models/weights\n"

    def stage_commands(self, source: str, dest: str, regions: tuple[str, str]) -> tuple[str, str]:
        """Checksums first, then a bucket-to-bucket sync across regions, checksums last."""
        head = (
            f"aws s3 cp --only-show-errors {q(source + SUMS)} /stage/{SUMS}\n"
            f"aws s3 cp --only-show-errors {q(source + MANIFEST)} /stage/{MANIFEST}\n"
        )
        body = (
            f"aws s3 sync --only-show-errors --exclude {SUMS} --exclude {MANIFEST} "
            f"--source-region {q(regions[0])} --region {q(regions[1])} {q(source)} {q(dest)}\n"
            f"aws s3 cp --only-show-errors /stage/{SUMS} {q(dest + SUMS)}\n"
            f"aws s3 cp --only-show-errors /stage/{MANIFEST} {q(dest + MANIFEST)}\n"
        )
        return head, body


FLEET: FleetProvider = AwsFleet()

"""Azure fleet pieces: Front Door in front of public load balancers, Blob weight copies."""

from __future__ import annotations

import re
from shlex import quote as q
from types import MappingProxyType

from archform.render.targets.kubernetes.provider import FleetProvider
from archform.render.targets.kubernetes.provider_base import FleetBase
from archform.render.targets.kubernetes.records import FleetView
from archform.render.targets.kubernetes.traffic import dns_label
from archform.render.targets.kubernetes.weights import MANIFEST, SUMS

_LB = "service.beta.kubernetes.io/azure-"


def _blob_parts(uri: str) -> tuple[str, str, str]:
    """(account, container, prefix with trailing slash) of a blob folder URL."""
    account, _, rest = uri.removeprefix("https://").partition(".blob.core.windows.net/")
    container, _, prefix = rest.partition("/")
    return account, container, prefix


def _blob_download(uri: str, dest: str) -> str:
    account, container, prefix = _blob_parts(uri)
    return (
        f"rm -rf {dest}.staging {dest} && "
        f"az storage blob download-batch --auth-mode login --account-name {q(account)} "
        f"--source {q(container)} --pattern {q(prefix + '*')} --destination {dest}.staging "
        "--max-connections 16 --output none && "
        # A rename, not a copy: the volume holds one copy of the weights.
        f"mv {q(dest + '.staging/' + prefix.rstrip('/'))} {dest}\n"
    )


class AzureFleet(FleetBase):
    """AKS: agent pools, Front Door to public load balancers, storage-account replicas."""

    # Blob copies go through the stage Job's disk: it needs a scratch copy of the weights.
    stage_scratch_copy = True
    # AKS workload identity: the pod of an annotated service account opts in with this label
    # (https://learn.microsoft.com/azure/aks/workload-identity-overview).
    stage_pod_labels = MappingProxyType({"azure.workload.identity/use": "true"})
    # AKS taints spot node pools; the servers tolerate it to run there.
    spot_tolerations = (
        MappingProxyType(
            {
                "key": "kubernetes.azure.com/scalesetpriority",
                "operator": "Equal",
                "value": "spot",
                "effect": "NoSchedule",
            }
        ),
    )
    # Front Door stamps X-Azure-FDID; the server checks it (origin lock, vLLM middleware).
    origin_header_check = True

    def replica_bucket(self, fleet: str, region: str, digest: str) -> str:
        """A storage account: 8 of the fleet + 10 of the region + the hash, 3-24 [a-z0-9]."""
        name, where = (re.sub(r"[^a-z0-9]", "", x) for x in (fleet, region))
        return f"{name[:8]}{where[:10]}{digest}"

    def service_exposure(self, v: FleetView) -> tuple[str, dict[str, str]]:
        """A public load balancer only Front Door reaches, or an internal one."""
        annotations = {
            _LB + "load-balancer-health-probe-protocol": "http",
            _LB + "load-balancer-health-probe-request-path": v.edge.health_path,
        }
        if v.global_lb:
            annotations[_LB + "dns-label-name"] = dns_label(v)
            # Origin lock at the network: the load balancer's NSG admits only Front Door's
            # backend ranges (https://cloud-provider-azure.sigs.k8s.io/topics/loadbalancer/).
            annotations[_LB + "allowed-service-tags"] = "AzureFrontDoor.Backend"
        else:
            annotations[_LB + "load-balancer-internal"] = "true"
        return "LoadBalancer", annotations

    def fetch_command(self, uri: str) -> str:
        """Log in as the kubelet identity, then download the in-region copy."""
        # `az login --identity` uses the node pool's kubelet identity, the only identity AKS
        # assigns to the node VM scale set when no add-on identities are enabled (as here).
        return "az login --identity --output none\n" + _blob_download(uri, "/models/weights")

    def stage_commands(self, source: str, dest: str, regions: tuple[str, str]) -> tuple[str, str]:
        """Download the version (checked), then upload it, checksums last."""
        # AKS workload identity injects these variables into pods of an annotated service
        # account (https://learn.microsoft.com/azure/aks/workload-identity-overview).
        login = (
            'az login --service-principal --username "$AZURE_CLIENT_ID" '
            '--tenant "$AZURE_TENANT_ID" '
            '--federated-token "$(cat "$AZURE_FEDERATED_TOKEN_FILE")" --output none\n'
        )
        head = login + _blob_download(source, "/stage/weights")
        head += f"cp /stage/weights/{SUMS} /stage/weights/{MANIFEST} /stage/\n"
        account, container, prefix = _blob_parts(dest)
        put = (
            f"az storage blob upload --auth-mode login --overwrite --account-name {q(account)} "
            f"--container-name {q(container)} --output none"
        )
        body = (
            f"(cd /stage/weights && sha256sum -c {SUMS}) >/stage/sha256-check.txt || "
            '{ grep -v ": OK$" /stage/sha256-check.txt >&2; exit 1; }\n'
            f"rm /stage/weights/{SUMS} /stage/weights/{MANIFEST}\n"
            f"az storage blob upload-batch --auth-mode login --overwrite --account-name "
            f"{q(account)} --destination {q(container)} "
            f"--destination-path {q(prefix.rstrip('/'))} --source /stage/weights "
            "--max-connections 16 --output none\n"
            f"{put} --name {q(prefix + SUMS)} --file /stage/{SUMS}\n"
            f"{put} --name {q(prefix + MANIFEST)} --file /stage/{MANIFEST}\n"
        )
        return head, body


FLEET: FleetProvider = AzureFleet()

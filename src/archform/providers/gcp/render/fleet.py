"""GCP fleet pieces: a multi-cluster Gateway, GCS weight copies, GKE node pools."""

from __future__ import annotations

from shlex import quote as q
from typing import Any

from archform.render.targets.kubernetes.common import meta as _meta
from archform.render.targets.kubernetes.provider import FleetProvider
from archform.render.targets.kubernetes.provider_base import FleetBase
from archform.render.targets.kubernetes.records import FleetView, RegionView
from archform.render.targets.kubernetes.traffic import edge_names, gateway_address
from archform.render.targets.kubernetes.weights import MANIFEST, SUMS


class GcpFleet(FleetBase):
    """GKE: one machine type per node pool, a global Gateway in the config cluster."""

    # GKE Workload Identity principals name namespace/service account across every
    # cluster of the project ("identity sameness",
    # https://cloud.google.com/kubernetes-engine/docs/concepts/workload-identity), so
    # per-region access needs per-region service-account names there.
    per_region_identity = True
    accelerator_label = True

    def service_exposure(self, v: FleetView) -> tuple[str, dict[str, str]]:
        """Exported to the multi-cluster Gateway when public, else an internal LB."""
        if v.global_lb:
            return "ClusterIP", {}
        return "LoadBalancer", {"networking.gke.io/load-balancer-type": "Internal"}

    def fetch_command(self, uri: str) -> str:
        """`gcloud storage rsync` of the in-region copy."""
        return f"gcloud storage rsync --recursive {q(uri)} /models/weights\n"

    def stage_commands(self, source: str, dest: str, regions: tuple[str, str]) -> tuple[str, str]:
        """Checksums first, then a bucket-to-bucket rsync, checksums last."""
        head = (
            f"gcloud storage cp {q(source + SUMS)} /stage/{SUMS}\n"
            f"gcloud storage cp {q(source + MANIFEST)} /stage/{MANIFEST}\n"
        )
        body = (
            "gcloud storage rsync --recursive "
            f"--exclude={q('(^|/)(' + SUMS + '|manifest[.]json)$')} {q(source)} {q(dest)}\n"
            f"gcloud storage cp /stage/{SUMS} {q(dest + SUMS)}\n"
            f"gcloud storage cp /stage/{MANIFEST} {q(dest + MANIFEST)}\n"
        )
        return head, body

    def region_objects(self, v: FleetView, region: RegionView) -> list[dict[str, Any]]:
        """The multi-cluster Gateway's objects when the fleet has a global entry point."""
        return gcp_global(v, config_cluster=region.index == 0) if v.global_lb else []


def gcp_global(v: FleetView, config_cluster: bool) -> list[dict[str, Any]]:
    """ServiceExport per region; Gateway, HTTPRoute and policies in the config cluster."""
    name = v.name
    labels = {"app.kubernetes.io/name": name}
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "net.gke.io/v1",
            "kind": "ServiceExport",
            "metadata": _meta(name, name, labels),
        }
    ]
    if not config_cluster:
        return objs
    backend = {"group": "net.gke.io", "kind": "ServiceImport", "name": name}
    gateway_ref = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": name}
    names = edge_names(v)
    tls = v.edge.tls
    # HTTPS only: the listener serves the Google-managed certificate of edge.domain from the
    # Certificate Manager map the program creates (annotation networking.gke.io/certmap,
    # https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway), no port 80.
    listener = (
        {"name": "https", "protocol": "HTTPS", "port": v.edge.port}
        if tls
        else {"name": "http", "protocol": "HTTP", "port": 80}
    )
    objs += [
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": _meta(
                name, name, labels, {"networking.gke.io/certmap": names["certmap"]} if tls else None
            ),
            "spec": {
                "gatewayClassName": "gke-l7-global-external-managed-mc",
                "addresses": [{"type": "NamedAddress", "value": gateway_address(v)}],
                "listeners": [{**listener, "allowedRoutes": {"kinds": [{"kind": "HTTPRoute"}]}}],
            },
        },
        *(
            [
                {
                    # TLS 1.2 or later at the load balancer: the Compute SSL policy the
                    # program creates (GCPGatewayPolicy sslPolicy,
                    # https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources).
                    "apiVersion": "networking.gke.io/v1",
                    "kind": "GCPGatewayPolicy",
                    "metadata": _meta(name, name, labels),
                    "spec": {
                        "default": {"sslPolicy": names["ssl_policy"]},
                        "targetRef": gateway_ref,
                    },
                }
            ]
            if tls
            else []
        ),
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": _meta(name, name, labels),
            "spec": {
                "parentRefs": [{"kind": "Gateway", "name": name}],
                "rules": [{"backendRefs": [{**backend, "port": v.server.port}]}],
            },
        },
        {
            # The global external Application LB times backend requests out after 30 s by
            # default; a generation may run longer
            # (https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources).
            "apiVersion": "networking.gke.io/v1",
            "kind": "GCPBackendPolicy",
            "metadata": _meta(name, name, labels),
            "spec": {
                "default": {
                    "timeoutSec": v.serving.request_timeout_s,
                    "connectionDraining": {"drainingTimeoutSec": v.serving.drain_s},
                },
                "targetRef": backend,
            },
        },
        {
            "apiVersion": "networking.gke.io/v1",
            "kind": "HealthCheckPolicy",
            "metadata": _meta(name, name, labels),
            "spec": {
                "default": {
                    "config": {
                        "type": "HTTP",
                        "httpHealthCheck": {
                            "port": v.server.port,
                            "requestPath": v.edge.health_path,
                        },
                    }
                },
                "targetRef": backend,
            },
        },
    ]
    return objs


FLEET: FleetProvider = GcpFleet()

"""The fleet namespace's NetworkPolicies: deny by default, then allow what the pods need.

- `default-deny`: every pod of the namespace, ingress and egress
  (https://kubernetes.io/docs/concepts/services-networking/network-policies/#default-deny-all-ingress-and-all-egress-traffic).
- `model-server`: ingress on the serving port from anywhere (the load balancer's health
  checks and traffic, the multi-cluster Gateway; Prometheus scrapes the same port) and, for
  servers with a separate metrics port, that port from the `monitoring` namespace only;
  egress to cluster DNS, HTTPS (object storage, the cloud's token endpoints) and the cloud's
  link-local identity endpoint.
- `model-stage`: the stage Job, egress only (the same three).

KEDA needs no allowance here: it reads Prometheus (namespace `monitoring`) and the API
server, never these pods. The clusters enforce the policies (EKS VPC CNI network policy,
GKE Dataplane V2, AKS Cilium; see the cloud programs).
"""

from __future__ import annotations

from typing import Any

from archform.render.targets.common.clouds import cloud
from archform.render.targets.kubernetes.common import meta
from archform.render.targets.kubernetes.records import FleetView

NETPOL = "networking.k8s.io/v1"
# Namespaces carry their name as this label (Kubernetes 1.22+, NamespaceDefaultLabelName).
NS_LABEL = "kubernetes.io/metadata.name"
MONITORING = "monitoring"  # the prometheus chart's namespace (workload.py CHARTS)
COMPONENT = "app.kubernetes.io/component"


def _egress(provider: str) -> list[dict[str, Any]]:
    dns = {
        "to": [{"namespaceSelector": {"matchLabels": {NS_LABEL: "kube-system"}}}],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }
    https = {
        "to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}],
        "ports": [{"protocol": "TCP", "port": 443}],
    }
    identity = [
        {"to": [{"ipBlock": {"cidr": cidr}}], "ports": [{"protocol": "TCP", "port": port}]}
        for cidr, port in cloud(provider).identity_endpoints
    ]
    return [dns, https, *identity]


def network_policies(v: FleetView, metrics_port: int) -> list[dict[str, Any]]:
    """The namespace's policies, default deny first."""
    name = v.name
    labels = {"app.kubernetes.io/name": name}
    both = ["Ingress", "Egress"]
    ingress: list[dict[str, Any]] = [{"ports": [{"protocol": "TCP", "port": v.server.port}]}]
    if metrics_port != v.server.port:
        ingress.append(
            {
                "from": [{"namespaceSelector": {"matchLabels": {NS_LABEL: MONITORING}}}],
                "ports": [{"protocol": "TCP", "port": metrics_port}],
            }
        )
    return [
        {
            "apiVersion": NETPOL,
            "kind": "NetworkPolicy",
            "metadata": meta("default-deny", name, labels),
            "spec": {"podSelector": {}, "policyTypes": both},
        },
        {
            "apiVersion": NETPOL,
            "kind": "NetworkPolicy",
            "metadata": meta("model-server", name, labels),
            "spec": {
                "podSelector": {"matchLabels": {**labels, COMPONENT: "model-server"}},
                "policyTypes": both,
                "ingress": ingress,
                "egress": _egress(v.provider),
            },
        },
        {
            "apiVersion": NETPOL,
            "kind": "NetworkPolicy",
            "metadata": meta("model-stage", name, labels),
            "spec": {
                "podSelector": {"matchLabels": {**labels, COMPONENT: "model-stage"}},
                "policyTypes": both,
                "egress": _egress(v.provider),
            },
        },
    ]

"""How requests reach and scale the model servers (Service, Gateway objects, ScaledObject)."""

from __future__ import annotations

import hashlib
from typing import Any

from archform.render.targets.kubernetes.common import PROMETHEUS
from archform.render.targets.kubernetes.common import meta as _meta
from archform.render.targets.kubernetes.records import FleetView
from archform.spec.engines import engine

# TLS 1.3 and 1.2 only, forward secrecy (the ELB policy AWS recommends for new listeners).
TLS_POLICY_AWS = "ELBSecurityPolicy-TLS13-1-2-2021-06"


def edge_names(v: FleetView) -> dict[str, str]:
    """Names of the GCP edge's Certificate Manager map and Compute SSL policy."""
    return {"certmap": f"{v.name}-edge", "ssl_policy": f"{v.name}-edge-tls"}


def service(v: FleetView) -> dict[str, Any]:
    """The Service in front of the servers (how it is exposed depends on the entry point)."""
    name = v.name
    provider, public = v.provider, v.global_lb
    annotations: dict[str, str] = {}
    kind = "LoadBalancer"
    ready = v.edge.health_path
    if provider == "aws":
        aws = "service.beta.kubernetes.io/aws-load-balancer-"
        annotations[aws + "type"] = "nlb"
        # Internal even behind Global Accelerator, which reaches NLBs in private subnets of a
        # VPC with an internet gateway (https://docs.aws.amazon.com/global-accelerator/latest/
        # dg/about-endpoints.sipp-caveats.html), so the regions are not reachable directly.
        annotations[aws + "internal"] = "true"
        # Global Accelerator uses the NLB's target-group health for NLB endpoints: check the
        # model endpoint over HTTP there (https://cloud-provider-aws.sigs.k8s.io/
        # service_controller/), not just that the port is open.
        annotations[aws + "healthcheck-protocol"] = "http"
        annotations[aws + "healthcheck-path"] = ready
        annotations[aws + "healthcheck-port"] = "traffic-port"
        if v.edge.tls:
            # Global Accelerator is a layer-4 proxy: TLS ends at the NLB's TLS listener, with
            # the ACM certificate the program issues for edge.domain (its ARN is added as
            # aws-load-balancer-ssl-cert at deploy time) and a TLS 1.2+ policy
            # (https://cloud-provider-aws.sigs.k8s.io/service_controller/, "ssl-cert",
            # "ssl-ports", "ssl-negotiation-policy"; ELB security policies:
            # https://docs.aws.amazon.com/elasticloadbalancing/latest/network/describe-ssl-policies.html).
            annotations[aws + "ssl-ports"] = "https"
            annotations[aws + "ssl-negotiation-policy"] = TLS_POLICY_AWS
    elif provider == "azure":
        az = "service.beta.kubernetes.io/azure-"
        annotations[az + "load-balancer-health-probe-protocol"] = "http"
        annotations[az + "load-balancer-health-probe-request-path"] = ready
        if public:
            annotations[az + "dns-label-name"] = dns_label(v)
            # Origin lock at the network: the load balancer's NSG admits only Front Door's
            # backend ranges (https://cloud-provider-azure.sigs.k8s.io/topics/loadbalancer/).
            annotations[az + "allowed-service-tags"] = "AzureFrontDoor.Backend"
        else:
            annotations[az + "load-balancer-internal"] = "true"
    elif public:
        kind = "ClusterIP"  # exported to the multi-cluster Gateway
    else:
        annotations["networking.gke.io/load-balancer-type"] = "Internal"
    # On AWS the NLB listener terminates TLS on the HTTPS port; elsewhere TLS ends at the
    # global entry point (Front Door, the Gateway), which reaches the Service on the server port.
    tls_here = provider == "aws" and v.edge.tls
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, name, {"app.kubernetes.io/name": name}, annotations),
        "spec": {
            "type": kind,
            "selector": {"app.kubernetes.io/name": name},
            "ports": [
                {
                    "name": "https" if tls_here else "http",
                    "port": v.edge.port if tls_here else v.server.port,
                    "targetPort": "http",
                    "protocol": "TCP",
                }
            ],
        },
    }


def dns_label(v: FleetView) -> str:
    """Azure public DNS label of a region's Service: <label>.<region>.cloudapp.azure.com.

    Labels are unique per region across all of Azure, so a stable hash of the fleet name is
    appended to make a clash with another tenant unlikely.
    """
    return f"{v.name}-{hashlib.sha256(v.name.encode()).hexdigest()[:6]}"


def scaled_object(v: FleetView) -> dict[str, Any]:
    """KEDA ScaledObject: Prometheus query on the server's own load metric."""
    name = v.name
    m = engine(v.server.kind).metrics
    sel = f'{{namespace="{name}"}}'
    metric, target = v.autoscaling.metric, v.autoscaling.target
    # Per READY replica. Totals use AverageValue: the HPA then wants ceil(total / target)
    # replicas whatever the count of replicas still loading (GetExternalPerPodMetricReplicas,
    # kubernetes pkg/controller/podautoscaler/replica_calculator.go), and loading replicas
    # add nothing to a total. Averages use Value, where the HPA multiplies metric / target by
    # the READY pods (GetExternalMetricReplicas -> getUsageRatioReplicaCount); the average
    # itself must then be over ready pods too, or replicas still loading (GPU idle, cache
    # empty) pull it down: kube-state-metrics' kube_pod_status_ready (the prometheus chart
    # installs kube-state-metrics) keeps only series of ready pods.
    ready = (
        f" * on(namespace, pod) group_left() "
        f'(kube_pod_status_ready{{namespace="{name}", condition="true"}} == 1)'
    )
    kv = " or ".join(k + sel for k in m.kv)
    queries = {
        "queue_depth": (f"sum({m.queue}{sel})", "AverageValue"),
        "requests_per_second": (f"sum(rate({m.ok}{sel}[1m]))", "AverageValue"),
        "kv_cache_usage": (f"avg(({kv}){ready})", "Value"),
        "gpu_utilization": (f"avg(DCGM_FI_DEV_GPU_UTIL{sel}{ready})", "Value"),
    }
    threshold = float(target)
    if metric == "queue_depth" and m.running is not None:
        # In flight = running + waiting: an engine with a running gauge runs at most
        # {max_num_seqs} requests (its record's arguments cap them, e.g. vLLM's
        # --max-num-seqs) and queues the rest, so the threshold is a full batch plus the
        # blueprint's queue target.
        running = f"sum({m.running}{sel})"
        queries["queue_depth"] = (f"{running} + {queries['queue_depth'][0]}", "AverageValue")
        threshold += v.serving.max_num_seqs
    query, metric_type = queries[metric]
    r = v.replicas
    fallback = (
        # KEDA applies a fallback only to AverageValue triggers (ScaledObject spec).
        {"failureThreshold": 3, "replicas": v.serving.fallback_replicas}
        if metric_type == "AverageValue"
        else None
    )
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": _meta(name, name, {"app.kubernetes.io/name": name}),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            # Prometheus scrapes at this interval too (workload.py VALUES["prometheus"]).
            "pollingInterval": v.autoscaling.interval_s,
            "cooldownPeriod": 360,
            "minReplicaCount": r.min,
            "maxReplicaCount": r.max,
            # `fallback` (https://keda.sh/docs/2.16/reference/scaledobject-spec/#fallback):
            # after 3 failed reads of Prometheus KEDA sets the replicas the estimate says
            # the region needs at peak, not a small fixed count that would shed load.
            **({"fallback": fallback} if fallback else {}),
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "behavior": {
                        "scaleUp": {
                            "stabilizationWindowSeconds": 0,
                            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}],
                        },
                        "scaleDown": {
                            "stabilizationWindowSeconds": 600,
                            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 120}],
                        },
                    }
                }
            },
            "triggers": [
                {
                    "type": "prometheus",
                    "metricType": metric_type,
                    "metadata": {
                        "serverAddress": PROMETHEUS,
                        "query": query,
                        "threshold": _num(threshold),
                    },
                }
            ],
        },
    }


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def gateway_address(v: FleetView) -> str:
    """Name of the reserved global IP the multi-cluster Gateway uses (GCP)."""
    return f"{v.name}-gateway"


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

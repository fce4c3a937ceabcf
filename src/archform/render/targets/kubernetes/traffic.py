"""How requests reach and scale the model servers (Service, Gateway objects, ScaledObject)."""

from __future__ import annotations

import hashlib
from typing import Any

from archform.render.targets.kubernetes.common import PROMETHEUS
from archform.render.targets.kubernetes.common import meta as _meta
from archform.render.targets.kubernetes.provider import fleet_of
from archform.render.targets.kubernetes.records import FleetView
from archform.spec.engines import engine


def edge_names(v: FleetView) -> dict[str, str]:
    """Names of the GCP edge's Certificate Manager map and Compute SSL policy."""
    return {"certmap": f"{v.name}-edge", "ssl_policy": f"{v.name}-edge-tls"}


def service(v: FleetView) -> dict[str, Any]:
    """The Service in front of the servers (how it is exposed depends on the entry point)."""
    name = v.name
    provider = v.provider
    kind, annotations = fleet_of(provider).service_exposure(v)
    # Where the regional load balancer terminates TLS it listens on the HTTPS port; elsewhere
    # TLS ends at the global entry point, which reaches the Service on the server port.
    tls_here = fleet_of(provider).tls_at_service and v.edge.tls
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

"""Every Kubernetes object of an inference fleet, built once as plain dicts.

The same dicts are embedded in the Pulumi program (created there as typed
pulumi_kubernetes resources) and written as YAML manifests that kubernetes-validate
checks in strict mode, so what is validated is exactly what is deployed.

Sources (URLs below): probes on the model endpoint and
liveness on /health (llm-d readiness guide); drain = preStop sleep 15 s + shutdown
budget under terminationGracePeriodSeconds (llm-d); /dev/shm as a memory emptyDir and
the KEDA trigger on vllm:num_requests_waiting (vLLM production-stack); PDB
maxUnavailable 1 (Gatekeeper/Kyverno); zone spread with ScheduleAnyway (datree rule).
- llm-d: https://llm-d.ai/docs/usage/readiness-probes
- vLLM production-stack: https://github.com/vllm-project/production-stack (helm/templates)
- Gatekeeper: https://open-policy-agent.github.io/gatekeeper-library/website/validation/poddisruptionbudget
- Kyverno: https://kyverno.io/policies/other/pdb-maxunavailable/pdb-maxunavailable
- datree: https://hub.datree.io/built-in-rules/prevent-pods-becoming-unschedulable
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from archform.render.targets import k8s_weights as weights
from archform.render.targets.fleet_view import GPU_POOL_LABEL

# After the preStop hook the server gets SIGTERM; this long to release the GPUs and exit.
SHUTDOWN_S = 30
PROMETHEUS = "http://prometheus-server.monitoring.svc.cluster.local:80"
SERVICE_ACCOUNT = weights.READER_SA

# Per server kind: readiness (model loaded) and liveness paths, Prometheus metric names.
# vLLM: /v1/models lists the served model only once it is loaded (llm-d readiness guide).
# TGI /health, Triton /v2/health/ready, NIM /v1/health/ready are each server's documented
# "ready" routes; their metric names are from the servers' metric docs [unverified here].
SERVERS: dict[str, dict[str, str]] = {
    # vLLM renamed gpu_cache_usage_perc to kv_cache_usage_perc (vLLM metrics doc); the query
    # takes whichever the pinned image exports ("a|b" -> PromQL `a or b`).
    "vllm": {
        "ready": "/v1/models",
        "live": "/health",
        "queue": "vllm:num_requests_waiting",
        "running": "vllm:num_requests_running",
        "kv": "vllm:kv_cache_usage_perc|vllm:gpu_cache_usage_perc",
        "ok": "vllm:request_success_total",
    },
    "tgi": {
        "ready": "/health",
        "live": "/info",
        "queue": "tgi_queue_size",
        "kv": "tgi_batch_current_size",
        "ok": "tgi_request_success",
    },
    "triton": {
        "ready": "/v2/health/ready",
        "live": "/v2/health/live",
        "queue": "nv_inference_pending_request_count",
        "kv": "nv_inference_pending_request_count",
        "ok": "nv_inference_request_success",
    },
    "nim": {
        "ready": "/v1/health/ready",
        "live": "/v1/health/live",
        "queue": "num_requests_waiting",
        "kv": "gpu_cache_usage_perc",
        "ok": "request_success_total",
    },
}


def _server_args(v: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    s, m = v["server"], v["model"]
    port, tp = str(s["port"]), str(s["tp"])
    offline = [
        {"name": "HF_HUB_OFFLINE", "value": "1"},
        {"name": "TRANSFORMERS_OFFLINE", "value": "1"},
    ]
    if s["kind"] == "vllm":
        return [
            "--model",
            "/models/weights",
            "--served-model-name",
            m["name"],
            "--tensor-parallel-size",
            tp,
            "--max-model-len",
            str(m["max_context"]),
            "--port",
            port,
            "--disable-log-requests",
            # Run at most the estimate's per-replica concurrency; beyond it vLLM queues
            # (vllm:num_requests_waiting), which the autoscaler counts.
            "--max-num-seqs",
            str(v["serving"]["max_num_seqs"]),
        ], offline
    if s["kind"] == "tgi":
        return [
            "--model-id",
            "/models/weights",
            "--num-shard",
            tp,
            "--port",
            port,
            "--max-total-tokens",
            str(m["max_context"]),
        ], offline
    if s["kind"] == "triton":
        return [
            "tritonserver",
            "--model-repository=/models/weights",
            f"--http-port={port}",
            "--metrics-port=8002",
        ], []
    env = [
        {"name": "NIM_MODEL_NAME", "value": "/models/weights"},
        {"name": "NIM_SERVED_MODEL_NAME", "value": m["name"]},
        {"name": "NIM_SERVER_PORT", "value": port},
    ]
    return [], env


def _meta(
    name: str, ns: str | None, labels: dict[str, str], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if ns is not None:
        meta["namespace"] = ns
    meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(sorted(annotations.items()))
    return meta


# vLLM's SIGTERM handler cancels the HTTP server task, aborting requests in flight
# (https://github.com/vllm-project/vllm/blob/main/vllm/entrypoints/launcher.py, serve_http),
# so the drain happens before SIGTERM, in preStop: wait until the server's own gauges
# vllm:num_requests_running and vllm:num_requests_waiting
# (https://github.com/vllm-project/vllm/blob/main/vllm/v1/metrics/loggers.py) are both 0,
# for at most the drain budget. The vLLM image ships Python (vLLM is a Python package).
_VLLM_DRAIN = """\
import re, sys, time, urllib.request
deadline = time.monotonic() + {budget}
time.sleep({settle})
pattern = re.compile(r"^vllm:num_requests_(?:running|waiting)(?:\\{{[^}}]*\\}})? (\\S+)$", re.M)
while time.monotonic() < deadline:
    try:
        text = urllib.request.urlopen("http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    except OSError:
        sys.exit(0)
    if sum(float(x) for x in pattern.findall(text)) == 0:
        sys.exit(0)
    time.sleep(1)
"""


def pre_stop(v: dict[str, Any]) -> list[str]:
    """preStop: wait for requests in flight to finish (vLLM), else sleep the drain budget."""
    budget = v["serving"]["drain_s"]
    if v["server"]["kind"] != "vllm":
        return ["sleep", str(budget)]
    script = _VLLM_DRAIN.format(budget=budget, settle=5, port=v["server"]["port"])
    return ["python3", "-c", script]


def pool_affinity(pool: str) -> dict[str, Any]:
    """Required node affinity to one archform pool (`gpu` or `system`)."""
    term = {"matchExpressions": [{"key": GPU_POOL_LABEL, "operator": "In", "values": [pool]}]}
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def deployment(v: dict[str, Any], region: dict[str, Any]) -> dict[str, Any]:
    """The model-server Deployment."""
    name = ns = v["name"]
    s = v["server"]
    paths = SERVERS[s["kind"]]
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "model-server"}
    args, env = _server_args(v)
    metrics_port = 8002 if s["kind"] == "triton" else s["port"]
    ports = [{"name": "http", "containerPort": s["port"], "protocol": "TCP"}]
    if metrics_port != s["port"]:
        ports.append({"name": "metrics", "containerPort": metrics_port, "protocol": "TCP"})
    tolerations = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if v["provider"] == "azure" and v["spot"]:
        tolerations.append(
            {
                "key": "kubernetes.azure.com/scalesetpriority",
                "operator": "Equal",
                "value": "spot",
                "effect": "NoSchedule",
            }
        )
    shm = "20Gi" if s["tp"] > 1 else "8Gi"
    # The weights cache is an emptyDir: its bytes count against the pod's ephemeral-storage
    # (https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
    # #local-ephemeral-storage), so the request reserves node disk for it at scheduling.
    disk = f"{v['disk']['pod_ephemeral_gib']}Gi"
    probe_period = 10
    startup_failures = math.ceil(s["load_time_seconds"] * 1.5 / probe_period)
    container: dict[str, Any] = {
        "name": "server",
        "image": s["image"],
        "imagePullPolicy": "IfNotPresent",
    }
    if args:
        container["args"] = args
    if env:
        container["env"] = env
    container.update(
        {
            "ports": ports,
            "resources": {
                "requests": {
                    "cpu": str(v["pod_cpu"]),
                    "memory": f"{v['pod_memory_gib']}Gi",
                    "nvidia.com/gpu": str(s["tp"]),
                    "ephemeral-storage": disk,
                },
                "limits": {
                    "memory": f"{v['pod_memory_gib']}Gi",
                    "nvidia.com/gpu": str(s["tp"]),
                    "ephemeral-storage": disk,
                },
            },
            "startupProbe": {
                "httpGet": {"path": paths["ready"], "port": "http"},
                "periodSeconds": probe_period,
                "timeoutSeconds": 5,
                "failureThreshold": startup_failures,
            },
            "readinessProbe": {
                "httpGet": {"path": paths["ready"], "port": "http"},
                "periodSeconds": 5,
                "timeoutSeconds": 5,
                "failureThreshold": 3,
            },
            "livenessProbe": {
                "httpGet": {"path": paths["live"], "port": "http"},
                "periodSeconds": 15,
                "timeoutSeconds": 5,
                "failureThreshold": 4,
            },
            "lifecycle": {"preStop": {"exec": {"command": pre_stop(v)}}},
            "securityContext": {"allowPrivilegeEscalation": False},
            "volumeMounts": [
                {"name": "dshm", "mountPath": "/dev/shm"},
                {"name": "models", "mountPath": "/models", "readOnly": True},
            ],
        }
    )
    fetch = {
        "name": "fetch-weights",
        "image": weights.FETCH_IMAGES[v["provider"]],
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-ec", weights.fetch_script(v["provider"], region["weights_uri"])],
        "env": weights.release_env(v, region),
        "resources": {
            "requests": {"cpu": "2", "memory": "4Gi", "ephemeral-storage": disk},
            "limits": {"memory": "4Gi", "ephemeral-storage": disk},
        },
        "securityContext": {"allowPrivilegeEscalation": False},
        "volumeMounts": [{"name": "models", "mountPath": "/models"}],
    }
    pod_annotations = {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(metrics_port),
        "prometheus.io/path": "/metrics",
        **weights.release_annotations(v),
    }
    selector = {"matchLabels": {"app.kubernetes.io/name": name}}
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": selector,
        }
        for key in ("topology.kubernetes.io/zone", "kubernetes.io/hostname")
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, ns, labels),
        "spec": {
            # No `replicas`: the autoscaler owns the count (min/max in the ScaledObject).
            "selector": selector,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
            },
            # New GPU nodes can take up to 15 min to report GPUs (cluster-autoscaler gpu.go).
            "progressDeadlineSeconds": s["load_time_seconds"] * 2 + 900,
            "template": {
                "metadata": {"labels": labels, "annotations": pod_annotations},
                "spec": {
                    "serviceAccountName": region["reader_sa"],
                    # The grace period counts from the start of preStop (Kubernetes pod
                    # lifecycle): drain, then SIGTERM and shutdown.
                    "terminationGracePeriodSeconds": v["serving"]["drain_s"] + SHUTDOWN_S,
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "affinity": pool_affinity("gpu"),
                    "tolerations": tolerations,
                    "topologySpreadConstraints": spread,
                    "initContainers": [fetch],
                    "containers": [container],
                    "volumes": [
                        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}},
                        {
                            "name": "models",
                            "emptyDir": {"sizeLimit": f"{v['model']['cache_gib']}Gi"},
                        },
                    ],
                },
            },
        },
    }


def service(v: dict[str, Any]) -> dict[str, Any]:
    """The Service in front of the servers (how it is exposed depends on the entry point)."""
    name = v["name"]
    provider, public = v["provider"], v["global_lb"]
    annotations: dict[str, str] = {}
    kind = "LoadBalancer"
    ready = SERVERS[v["server"]["kind"]]["ready"]
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
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, name, {"app.kubernetes.io/name": name}, annotations),
        "spec": {
            "type": kind,
            "selector": {"app.kubernetes.io/name": name},
            "ports": [
                {
                    "name": "http",
                    "port": v["server"]["port"],
                    "targetPort": "http",
                    "protocol": "TCP",
                }
            ],
        },
    }


def dns_label(v: dict[str, Any]) -> str:
    """Azure public DNS label of a region's Service: <label>.<region>.cloudapp.azure.com.

    Labels are unique per region across all of Azure, so a stable hash of the fleet name is
    appended to make a clash with another tenant unlikely.
    """
    return f"{v['name']}-{hashlib.sha256(v['name'].encode()).hexdigest()[:6]}"


def scaled_object(v: dict[str, Any]) -> dict[str, Any]:
    """KEDA ScaledObject: Prometheus query on the server's own load metric."""
    name = v["name"]
    kind = v["server"]["kind"]
    m = SERVERS[kind]
    sel = f'{{namespace="{name}"}}'
    metric, target = v["autoscaling"]["metric"], v["autoscaling"]["target"]
    queries = {
        "queue_depth": (f"sum({m['queue']}{sel})", "AverageValue"),
        "requests_per_second": (f"sum(rate({m['ok']}{sel}[1m]))", "AverageValue"),
        "kv_cache_usage": (f"avg({' or '.join(k + sel for k in m['kv'].split('|'))})", "Value"),
        "gpu_utilization": (f"avg(DCGM_FI_DEV_GPU_UTIL{sel})", "Value"),
    }
    threshold = float(target)
    if metric == "queue_depth" and "running" in m:
        # In flight = running + waiting: vLLM runs up to --max-num-seqs requests and queues
        # the rest, so the threshold is a full batch plus the blueprint's queue target.
        running = f"sum({m['running']}{sel})"
        queries["queue_depth"] = (f"{running} + {queries['queue_depth'][0]}", "AverageValue")
        threshold += v["serving"]["max_num_seqs"]
    query, metric_type = queries[metric]
    r = v["replicas"]
    fallback = (
        # KEDA applies a fallback only to AverageValue triggers (ScaledObject spec).
        {"failureThreshold": 3, "replicas": v["serving"]["fallback_replicas"]}
        if metric_type == "AverageValue"
        else None
    )
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": _meta(name, name, {"app.kubernetes.io/name": name}),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "pollingInterval": 15,
            "cooldownPeriod": 360,
            "minReplicaCount": r["min"],
            "maxReplicaCount": r["max"],
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


def gateway_address(v: dict[str, Any]) -> str:
    """Name of the reserved global IP the multi-cluster Gateway uses (GCP)."""
    return f"{v['name']}-gateway"


def _gcp_global(v: dict[str, Any], config_cluster: bool) -> list[dict[str, Any]]:
    name = v["name"]
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
    objs += [
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": _meta(name, name, labels),
            "spec": {
                "gatewayClassName": "gke-l7-global-external-managed-mc",
                "addresses": [{"type": "NamedAddress", "value": gateway_address(v)}],
                "listeners": [
                    {
                        "name": "http",
                        "protocol": "HTTP",
                        "port": 80,
                        "allowedRoutes": {"kinds": [{"kind": "HTTPRoute"}]},
                    }
                ],
            },
        },
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": _meta(name, name, labels),
            "spec": {
                "parentRefs": [{"kind": "Gateway", "name": name}],
                "rules": [{"backendRefs": [{**backend, "port": v["server"]["port"]}]}],
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
                    "timeoutSec": v["serving"]["request_timeout_s"],
                    "connectionDraining": {"drainingTimeoutSec": v["serving"]["drain_s"]},
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
                            "port": v["server"]["port"],
                            "requestPath": SERVERS[v["server"]["kind"]]["ready"],
                        },
                    }
                },
                "targetRef": backend,
            },
        },
    ]
    return objs


def region_objects(v: dict[str, Any], region: dict[str, Any]) -> list[dict[str, Any]]:
    """All objects of one region's cluster, in apply order."""
    name = v["name"]
    labels = {"app.kubernetes.io/name": name}
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, labels)},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(region["reader_sa"], name, labels),
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(region["replicator_sa"], name, labels),
        },
        weights.stage_job(
            v,
            region,
            _meta(weights.stage_job_name(v), name, labels),
            pool_affinity("system"),
        ),
        deployment(v, region),
        service(v),
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": _meta(name, name, labels),
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}},
        },
        scaled_object(v),
    ]
    if v["provider"] == "gcp" and v["global_lb"]:
        objs += _gcp_global(v, config_cluster=region["index"] == 0)
    return objs


def fleet_objects(v: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Region name -> its objects."""
    return {r["name"]: region_objects(v, r) for r in v["regions"]}

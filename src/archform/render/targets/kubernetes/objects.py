"""Every Kubernetes object of an inference fleet, built once as plain dicts.

The same dicts are embedded in the Pulumi program (created there as typed
pulumi_kubernetes resources) and written as YAML manifests that kubernetes-validate
checks in strict mode, so what is validated is exactly what is deployed.

Probes: readiness and startup on the model endpoint, liveness on /health (llm-d readiness
guide); /dev/shm as a memory emptyDir (vLLM production-stack); PDB maxUnavailable 1
(Gatekeeper/Kyverno); zone spread with ScheduleAnyway (datree rule). The weights pipeline is
in kubernetes.weights, Service, entry point and autoscaler objects in kubernetes.traffic.
- llm-d: https://llm-d.ai/docs/usage/readiness-probes
- vLLM production-stack: https://github.com/vllm-project/production-stack (helm/templates)
- Gatekeeper: https://open-policy-agent.github.io/gatekeeper-library/website/validation/poddisruptionbudget
- Kyverno: https://kyverno.io/policies/other/pdb-maxunavailable/pdb-maxunavailable
- datree: https://hub.datree.io/built-in-rules/prevent-pods-becoming-unschedulable
"""

from __future__ import annotations

import math
from typing import Any

from archform.render.targets.fleet.provider import fleet_of
from archform.render.targets.fleet.records import FleetView, RegionView
from archform.render.targets.fleet.view import GPU_POOL_LABEL
from archform.render.targets.kubernetes import edge, netpol, weights
from archform.render.targets.kubernetes.awaits import startup_budget
from archform.render.targets.kubernetes.common import (
    SAFE_TO_EVICT_LOCAL_VOLUMES,
    SERVERS,
    digest_skip,
)
from archform.render.targets.kubernetes.common import meta as _meta
from archform.render.targets.kubernetes.traffic import (
    dns_label,
    edge_names,
    gateway_address,
    scaled_object,
    service,
)

__all__ = ["SERVERS", "dns_label", "edge_names", "fleet_objects", "gateway_address", "pre_stop"]

# After the preStop hook the server gets SIGTERM; this long to release the GPUs and exit.
SHUTDOWN_S = 30
# No container needs a Linux capability or to gain privileges.
CONTAINER_SECURITY: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}


def _server_args(v: FleetView) -> tuple[list[str], list[dict[str, Any]]]:
    s, m = v.server, v.model
    port, tp = str(s.port), str(s.tp)
    offline = [
        {"name": "HF_HUB_OFFLINE", "value": "1"},
        {"name": "TRANSFORMERS_OFFLINE", "value": "1"},
    ]
    if s.kind == "vllm":
        return [
            "--model",
            "/models/weights",
            "--served-model-name",
            m.name,
            "--tensor-parallel-size",
            tp,
            "--max-model-len",
            str(m.max_context),
            "--port",
            port,
            "--disable-log-requests",
            # Run at most the estimate's per-replica concurrency; beyond it vLLM queues
            # (vllm:num_requests_waiting), which the autoscaler counts.
            "--max-num-seqs",
            str(v.serving.max_num_seqs),
            *edge.server_args(v),
        ], offline + edge.server_env(v)
    if s.kind == "tgi":
        return [
            "--model-id",
            "/models/weights",
            "--num-shard",
            tp,
            "--port",
            port,
            "--max-total-tokens",
            str(m.max_context),
        ], offline
    if s.kind == "triton":
        return [
            "tritonserver",
            "--model-repository=/models/weights",
            f"--http-port={port}",
            "--metrics-port=8002",
        ], []
    env = [
        {"name": "NIM_MODEL_NAME", "value": "/models/weights"},
        {"name": "NIM_SERVED_MODEL_NAME", "value": m.name},
        {"name": "NIM_SERVER_PORT", "value": port},
    ]
    return [], env


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


def pre_stop(kind: str, port: int, budget: int) -> list[str]:
    """preStop: wait for requests in flight to finish (vLLM), else sleep the drain budget."""
    if kind != "vllm":
        return ["sleep", str(budget)]
    script = _VLLM_DRAIN.format(budget=budget, settle=5, port=port)
    return ["python3", "-c", script]


def pool_affinity(pool: str) -> dict[str, Any]:
    """Required node affinity to one archform pool (`gpu` or `system`)."""
    term = {"matchExpressions": [{"key": GPU_POOL_LABEL, "operator": "In", "values": [pool]}]}
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def deployment(v: FleetView, region: RegionView) -> dict[str, Any]:
    """The model-server Deployment."""
    name = ns = v.name
    s = v.server
    paths = SERVERS[s.kind]
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "model-server"}
    args, env = _server_args(v)
    metrics_port = 8002 if s.kind == "triton" else s.port
    ports = [{"name": "http", "containerPort": s.port, "protocol": "TCP"}]
    if metrics_port != s.port:
        ports.append({"name": "metrics", "containerPort": metrics_port, "protocol": "TCP"})
    tolerations = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if v.spot:
        tolerations += [dict(t) for t in fleet_of(v.provider).spot_tolerations]
    shm = "20Gi" if s.tp > 1 else "8Gi"
    # The weights cache is an emptyDir: its bytes count against the pod's ephemeral-storage
    # (https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
    # #local-ephemeral-storage), so the request reserves node disk for it at scheduling.
    disk = f"{v.disk.pod_ephemeral_gib}Gi"
    probe_period = 10
    startup_failures = math.ceil(s.load_time_seconds * 1.5 / probe_period)
    container: dict[str, Any] = {
        "name": "server",
        "image": s.image,
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
                    "cpu": str(v.pod_cpu),
                    "memory": f"{v.pod_memory_gib}Gi",
                    "nvidia.com/gpu": str(s.tp),
                    "ephemeral-storage": disk,
                },
                "limits": {
                    "memory": f"{v.pod_memory_gib}Gi",
                    "nvidia.com/gpu": str(s.tp),
                    "ephemeral-storage": disk,
                },
            },
            "startupProbe": {
                "httpGet": {"path": v.edge.health_path, "port": "http"},
                "periodSeconds": probe_period,
                "timeoutSeconds": 5,
                "failureThreshold": startup_failures,
            },
            "readinessProbe": {
                "httpGet": {"path": v.edge.health_path, "port": "http"},
                "periodSeconds": 5,
                "timeoutSeconds": 5,
                "failureThreshold": 3,
            },
            "livenessProbe": {
                "httpGet": {"path": paths.live, "port": "http"},
                "periodSeconds": 15,
                "timeoutSeconds": 5,
                "failureThreshold": 4,
            },
            "lifecycle": {
                "preStop": {
                    "exec": {"command": pre_stop(v.server.kind, v.server.port, v.serving.drain_s)}
                }
            },
            "securityContext": CONTAINER_SECURITY,
            "volumeMounts": [
                {"name": "dshm", "mountPath": "/dev/shm"},
                {"name": "models", "mountPath": "/models", "readOnly": True},
            ],
        }
    )
    fetch = {
        "name": "fetch-weights",
        "image": weights.fetch_image(v.provider),
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-ec", weights.fetch_script(v.provider, region.weights_uri)],
        "env": weights.release_env(v, region),
        "resources": {
            "requests": {"cpu": "2", "memory": "4Gi", "ephemeral-storage": disk},
            "limits": {"memory": "4Gi", "ephemeral-storage": disk},
        },
        "securityContext": CONTAINER_SECURITY,
        "volumeMounts": [{"name": "models", "mountPath": "/models"}],
    }
    volumes: list[dict[str, Any]] = [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}},
        {"name": "models", "emptyDir": {"sizeLimit": f"{v.model.cache_gib}Gi"}},
    ]
    pod_annotations = {
        # Consolidation: cluster-autoscaler never removes a node whose pods have local
        # storage unless every local volume is listed here (FAQ, "What types of pods can
        # prevent CA from removing a node?"); both are caches a new pod rebuilds, and the
        # PodDisruptionBudget still bounds how many replicas go at once.
        SAFE_TO_EVICT_LOCAL_VOLUMES: ",".join(vol["name"] for vol in volumes),
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(metrics_port),
        "prometheus.io/path": "/metrics",
        **weights.release_annotations(v),
    }
    # Not local storage for cluster-autoscaler (a ConfigMap), so not in the list above.
    check_volumes, check_mounts = edge.volumes(v)
    volumes += check_volumes
    container["volumeMounts"] += check_mounts
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
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            **_meta(name, ns, labels),
            **_skips(
                digest_skip([str(container["image"]), weights.fetch_image(v.provider)]),
                edge.checkov_skips(v),
            ),
        },
        "spec": {
            # No `replicas`: the autoscaler owns the count (min/max in the ScaledObject).
            "selector": selector,
            "strategy": {
                "type": "RollingUpdate",
                # A quarter of the replicas at a time: one at a time, a rollout of N replicas
                # takes N pod starts (tens of minutes each for a large model); the surge
                # pods need spare GPU capacity, which the autoscaler adds.
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0},
            },
            # Set below from the startup budget: a new GPU node, then one pod's download,
            # verification and load (kubernetes.awaits), so a slow start is not "no progress".
            "progressDeadlineSeconds": 0,
            "template": {
                "metadata": {"labels": labels, "annotations": pod_annotations},
                "spec": {
                    "serviceAccountName": region.reader_sa,
                    # No Kubernetes API access: the cloud identity comes from the Pod
                    # Identity agent / metadata server / kubelet identity, not this token.
                    "automountServiceAccountToken": False,
                    # The grace period counts from the start of preStop (Kubernetes pod
                    # lifecycle): drain, then SIGTERM and shutdown.
                    "terminationGracePeriodSeconds": v.serving.drain_s + SHUTDOWN_S,
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "affinity": pool_affinity("gpu"),
                    "tolerations": tolerations,
                    "topologySpreadConstraints": spread,
                    "initContainers": [fetch],
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }
    budget = startup_budget(obj, v.model.weights_gib, v.replicas.max)
    obj["spec"]["progressDeadlineSeconds"] = budget.create_s
    return obj


def _skips(digests: dict[str, dict[str, str]], more: list[str]) -> dict[str, dict[str, str]]:
    """Checkov skip annotations: the digest skip (checkov.io/skip1) and then `more`."""
    notes = dict(digests.get("annotations", {}))
    for entry in more:
        notes[f"checkov.io/skip{len(notes) + 1}"] = entry
    return {"annotations": notes} if notes else {}


def _service_account(name: str, ns: str, labels: dict[str, str]) -> dict[str, Any]:
    # Pods of the fleet never call the Kubernetes API: no token is mounted from this account.
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": _meta(name, ns, labels),
        "automountServiceAccountToken": False,
    }


def region_objects(v: FleetView, region: RegionView) -> list[dict[str, Any]]:
    """All objects of one region's cluster, in apply order."""
    name = v.name
    labels = {"app.kubernetes.io/name": name}
    metrics_port = 8002 if v.server.kind == "triton" else v.server.port
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, labels)},
        _service_account(region.reader_sa, name, labels),
        _service_account(region.replicator_sa, name, labels),
        *edge.front_door_objects(v),
        *netpol.network_policies(v, metrics_port),
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
    objs += fleet_of(v.provider).region_objects(v, region)
    return objs


def fleet_objects(v: FleetView) -> dict[str, list[dict[str, Any]]]:
    """Region name -> its objects."""
    return {r.name: region_objects(v, r) for r in v.regions}

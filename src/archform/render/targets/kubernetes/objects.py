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

from archform.render.targets.kubernetes import edge, netpol, weights
from archform.render.targets.kubernetes.awaits import startup_budget
from archform.render.targets.kubernetes.common import (
    GPU_POOL_LABEL,
    SAFE_TO_EVICT_LOCAL_VOLUMES,
    digest_skip,
)
from archform.render.targets.kubernetes.common import meta as _meta
from archform.render.targets.kubernetes.provider import fleet_of
from archform.render.targets.kubernetes.records import FleetView, RegionView
from archform.render.targets.kubernetes.server import engine_of, metrics_port, pre_stop, server_args
from archform.render.targets.kubernetes.traffic import (
    dns_label,
    edge_names,
    gateway_address,
    scaled_object,
    service,
)
from archform.spec.rollout import MAX_SURGE_PERCENT

__all__ = ["dns_label", "edge_names", "fleet_objects", "gateway_address"]

# After the preStop hook the server gets SIGTERM; this long to release the GPUs and exit.
SHUTDOWN_S = 30
# No container needs a Linux capability or to gain privileges.
CONTAINER_SECURITY: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}


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
    e = engine_of(v)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "model-server"}
    args, env = server_args(v)
    scrape = metrics_port(v)
    ports = [{"name": "http", "containerPort": s.port, "protocol": "TCP"}]
    if scrape != s.port:
        ports.append({"name": "metrics", "containerPort": scrape, "protocol": "TCP"})
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
                "httpGet": {"path": e.live_path, "port": "http"},
                "periodSeconds": 15,
                "timeoutSeconds": 5,
                "failureThreshold": 4,
            },
            "lifecycle": {
                "preStop": {"exec": {"command": pre_stop(e, v.server.port, v.serving.drain_s)}}
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
        "prometheus.io/port": str(scrape),
        "prometheus.io/path": e.metrics.path,
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
                # pods need spare GPU capacity, which the autoscaler adds: each GPU pool's
                # maximum carries the rollout headroom for them (spec.rollout).
                "rollingUpdate": {"maxSurge": f"{MAX_SURGE_PERCENT}%", "maxUnavailable": 0},
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
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, labels)},
        _service_account(region.reader_sa, name, labels),
        _service_account(region.replicator_sa, name, labels),
        *edge.front_door_objects(v),
        *netpol.network_policies(v, metrics_port(v)),
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

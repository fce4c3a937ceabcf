"""Shared pieces of the fleet's Kubernetes objects: per-server facts and object metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from archform.spec.container_images import has_digest

PROMETHEUS = "http://prometheus-server.monitoring.svc.cluster.local:80"
# cluster-autoscaler's pod annotations (kubernetes/autoscaler cluster-autoscaler/FAQ.md,
# "What types of pods can prevent CA from removing a node?").
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


# Per server kind: readiness (model loaded) and liveness paths, Prometheus metric names.
# vLLM: /v1/models lists the served model only once it is loaded (llm-d readiness guide).
# TGI /health, Triton /v2/health/ready, NIM /v1/health/ready are each server's documented
# "ready" routes; their metric names are from the servers' metric docs [unverified here].
@dataclass(frozen=True, slots=True)
class ServerFacts:
    """An inference server's HTTP paths and the Prometheus metrics the autoscaler queries.

    `kv` may name two metrics as "a|b" (PromQL `a or b`); `running` is set where the server
    exports a running-requests gauge that counts towards the queue.
    """

    ready: str
    live: str
    queue: str
    kv: str
    ok: str
    running: str | None = None


SERVERS: dict[str, ServerFacts] = {
    # vLLM renamed gpu_cache_usage_perc to kv_cache_usage_perc (vLLM metrics doc); the query
    # takes whichever the pinned image exports ("a|b" -> PromQL `a or b`).
    "vllm": ServerFacts(
        ready="/v1/models",
        live="/health",
        queue="vllm:num_requests_waiting",
        running="vllm:num_requests_running",
        kv="vllm:kv_cache_usage_perc|vllm:gpu_cache_usage_perc",
        ok="vllm:request_success_total",
    ),
    "tgi": ServerFacts(
        ready="/health",
        live="/info",
        queue="tgi_queue_size",
        kv="tgi_batch_current_size",
        ok="tgi_request_success",
    ),
    "triton": ServerFacts(
        ready="/v2/health/ready",
        live="/v2/health/live",
        queue="nv_inference_pending_request_count",
        kv="nv_inference_pending_request_count",
        ok="nv_inference_request_success",
    ),
    "nim": ServerFacts(
        ready="/v1/health/ready",
        live="/v1/health/live",
        queue="num_requests_waiting",
        kv="gpu_cache_usage_perc",
        ok="request_success_total",
    ),
}


def meta(
    name: str, ns: str | None, labels: dict[str, str], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    """Metadata with name, optional namespace, labels and sorted annotations."""
    meta: dict[str, Any] = {"name": name}
    if ns is not None:
        meta["namespace"] = ns
    meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(sorted(annotations.items()))
    return meta


def digest_skip(images: list[str]) -> dict[str, dict[str, str]]:
    """Metadata `annotations` telling Checkov why CKV_K8S_43 (image digests) does not hold.

    Empty when every image names its digest. Otherwise a `checkov.io/skip1` annotation
    (Checkov's per-resource skip, kubernetes_utils.SKIP_ANNOTATION_PREFIXES) naming the
    images archform's image table has no registry digest for; `archform verify` lists it.
    """
    bare = sorted({i for i in images if not has_digest(i)})
    if not bare:
        return {}
    reason = (
        f"no registry digest recorded for {', '.join(bare)} in archform's image table "
        "(spec/data/container_images.yaml); pin server.image as <image>:<tag>@sha256:<digest>"
    )
    return {"annotations": {"checkov.io/skip1": f"CKV_K8S_43={reason}"}}

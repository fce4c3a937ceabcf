"""Shared pieces of the fleet's Kubernetes objects: per-server facts and object metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PROMETHEUS = "http://prometheus-server.monitoring.svc.cluster.local:80"


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

"""Shared pieces of the fleet's Kubernetes objects: object metadata and annotations.

Engine facts (paths, metrics, arguments) are in the engine records, `archform.spec.engines`.
"""

from __future__ import annotations

from typing import Any

from archform.spec.container_images import has_digest

# The node label of archform's pools (`gpu`, `system`): pods pick their pool by it.
GPU_POOL_LABEL = "archform.io/pool"
PROMETHEUS = "http://prometheus-server.monitoring.svc.cluster.local:80"
# cluster-autoscaler's pod annotations (kubernetes/autoscaler cluster-autoscaler/FAQ.md,
# "What types of pods can prevent CA from removing a node?").
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


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

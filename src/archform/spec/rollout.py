"""How archform rolls a model-server Deployment, and the GPU capacity a rollout needs.

The Deployment rolls a quarter of its replicas at a time with no replica taken down first
(`maxSurge: 25%`, `maxUnavailable: 0`): a promotion never dips serving capacity. The surge
pods need GPUs of their own; at the autoscaler's maximum every GPU is taken, so each GPU pool
may grow past the blueprint's `max_nodes_per_region` by the nodes the surge pods need (the
*rollout headroom*). Without it a rollout started at peak waits for GPUs nobody adds until
`progressDeadlineSeconds`, and `pulumi up` fails (Kubernetes documentation, Deployments,
"Max Surge" and "Max Unavailable":
https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#max-surge). The cluster
autoscaler adds those nodes only while surge pods are pending and removes them after.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from archform.spec.models.inference import InferenceFleet

MAX_SURGE_PERCENT = 25
"""The Deployment's maxSurge, in percent of its replicas (Kubernetes rounds a percentage up)."""


def surge_pods(replicas: int, percent: int = MAX_SURGE_PERCENT) -> int:
    """Pods a rollout of `replicas` adds at once: maxSurge `percent`, rounded up, at least 1.

    Kubernetes rounds a percentage maxSurge up (the Deployments page cited above).
    """
    return max(1, math.ceil(replicas * percent / 100))


def headroom_nodes(max_replicas: int, replicas_per_node: int) -> int:
    """Nodes the surge pods of a rollout at `max_replicas` need beyond the pool's maximum."""
    return math.ceil(surge_pods(max_replicas) / max(1, replicas_per_node))


def fleet_headroom_nodes(fleet: InferenceFleet) -> int:
    """The rollout headroom of a fleet's scaling GPU pool, per region.

    What render.fleet.view and spec.quotas both count: replicas per node from the GPUs and
    the tensor parallelism.
    """
    pool = fleet.gpu_pool
    per_node = pool.gpu.per_node if pool.gpu else 1
    replicas_per_node = max(1, per_node // max(1, fleet.server.tensor_parallel))
    return headroom_nodes(pool.max_nodes_per_region * replicas_per_node, replicas_per_node)

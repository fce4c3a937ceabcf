"""A promotion started at the autoscaler's maximum can finish (day-1 review, finding F4).

The model server rolls with maxSurge 25% and maxUnavailable 0: no replica is taken down before
its successor is ready, so the surge pods need GPUs of their own. At the maximum every GPU of
the pool is taken; without room for the surge pods they stay Pending until
progressDeadlineSeconds and `pulumi up` fails. Each fleet's GPU pools must therefore hold the
maximum replicas plus the surge pods (Kubernetes, Deployments: "Max Surge",
https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#max-surge).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from archform.render.targets.fleet.view import fleet_view
from archform.render.targets.kubernetes.objects import fleet_objects
from support.fleet_cases import fleet_cases

CASES = fleet_cases()


def _deployment(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [found] = [o for o in objects if o.get("kind") == "Deployment"]
    return found


def _surge(strategy: dict[str, Any], replicas: int) -> int:
    """Kubernetes' own rounding: a percentage maxSurge is rounded up (deployment docs)."""
    surge = strategy["rollingUpdate"]["maxSurge"]
    if isinstance(surge, str) and surge.endswith("%"):
        return math.ceil(replicas * int(surge[:-1]) / 100)
    return int(surge)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_gpu_pools_hold_the_surge_pods_of_a_rollout_at_the_maximum(case: Any) -> None:
    fleet = case.load()[0]
    view = fleet_view(fleet)
    for region, objects in fleet_objects(view).items():
        deployment = _deployment(objects)
        strategy = deployment["spec"]["strategy"]
        assert strategy["rollingUpdate"]["maxUnavailable"] == 0, region
        per_node = view.gpu_pools[0].gpus // fleet.server.tensor_parallel
        slots = sum(p.max for p in view.gpu_pools) * per_node
        peak = view.replicas.max
        assert peak == fleet.gpu_pool.max_nodes_per_region * per_node, "the blueprint's maximum"
        needed = peak + _surge(strategy, peak)
        assert slots >= needed, (region, slots, needed)

"""How long `pulumi up` waits for each serving object: the workload's own startup budget.

The Pulumi Kubernetes provider waits 10 minutes for a Deployment (create or update) unless
the resource's customTimeouts say otherwise (deploy_timing.yaml cites the provider source),
and an update waits for the whole rollout. A pod of a 70B model downloads, verifies and
loads for the better part of an hour, so the provider default fails every first deploy and
every rollout after a promotion. The budget is computed from the Deployment object itself
(its startup probe, rollout strategy and grace period) plus the weights' size:

- per pod: image pull + download of the weights + ``sha256sum -c`` over them (both at the
  object-store rate) + the startup probe's allowance (periodSeconds x failureThreshold,
  which kubelet enforces: past it the container is killed);
- create: one new GPU node (the cluster autoscaler's --max-node-provision-time) + one pod
  (the Deployment has no `replicas`: it starts at one, KEDA scales it afterwards);
- update: one new node + ceil(max replicas / maxSurge) waves of one pod start plus the old
  pod's termination grace each (maxUnavailable 0: a wave ends when the new pods are ready).

The generated policy pack re-derives the same budget from the recorded resource and fails
the plan when a workload's await is shorter (templates/policy/policies.py.j2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from archform.spec import rollout
from archform.spec.deploy_timing import deploy_timing


@dataclass(frozen=True, slots=True)
class StartupBudget:
    """Seconds each step of bringing up one workload may take (see the module docstring)."""

    image_pull_s: int
    download_s: int
    verify_s: int
    probe_s: int
    per_pod_s: int
    node_s: int
    grace_s: int
    waves: int
    create_s: int
    update_s: int


@dataclass(frozen=True, slots=True)
class AwaitView:
    """Pulumi customTimeouts (create/update seconds) of one kind of object."""

    create: int
    update: int


def transfer_seconds(gib: float, mb_per_s: float) -> int:
    """Seconds to move `gib` GiB at `mb_per_s` MB/s (decimal megabytes)."""
    return math.ceil(gib * 2**30 / (mb_per_s * 1e6))


def surge_pods(strategy: dict[str, Any], replicas: int) -> int:
    """Pods a rolling update adds at once: maxSurge as a count, or a percentage rounded up."""
    surge = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")
    if isinstance(surge, str) and surge.endswith("%"):
        return rollout.surge_pods(replicas, int(surge[:-1]))
    return max(1, int(surge))


def startup_budget(
    deployment: dict[str, Any], weights_gib: float, max_replicas: int
) -> StartupBudget:
    """The budget of one model-server Deployment object (a manifest dict)."""
    facts = deploy_timing()
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    probe = next(
        (c["startupProbe"] for c in pod["containers"] if "startupProbe" in c),
        {"periodSeconds": 0, "failureThreshold": 0},
    )
    probe_s = int(probe.get("initialDelaySeconds", 0)) + int(probe["periodSeconds"]) * int(
        probe["failureThreshold"]
    )
    moved = transfer_seconds(weights_gib, facts.object_store_mb_per_s)
    per_pod = facts.image_pull_s + 2 * moved + probe_s
    grace = int(pod.get("terminationGracePeriodSeconds", 30))
    waves = math.ceil(max_replicas / surge_pods(spec.get("strategy") or {}, max_replicas))
    node = facts.node_provision_s
    return StartupBudget(
        image_pull_s=facts.image_pull_s,
        download_s=moved,
        verify_s=moved,
        probe_s=probe_s,
        per_pod_s=per_pod,
        node_s=node,
        grace_s=grace,
        waves=waves,
        create_s=node + per_pod,
        update_s=node + waves * (per_pod + grace),
    )


def await_of(budget: StartupBudget) -> AwaitView:
    """The customTimeouts covering the budget, rounded up to whole minutes."""

    def minutes(seconds: int) -> int:
        return math.ceil(seconds / 60) * 60

    return AwaitView(create=minutes(budget.create_s), update=minutes(budget.update_s))

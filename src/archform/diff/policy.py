"""Update policy: the impact of changing each blueprint field, as a table.

Like ParallelCluster's per-field update policies, every field of every blueprint kind has a
row: a path pattern, an impact class and a one-line reason saying what applying the change
does to a running system. Classes, worst first:

- ``cluster-wide outage``: the controller or the network the whole cluster hangs off is
  replaced (provider, region, zones, VPC CIDR, fabric kind or topology, Slurm major version,
  controller host or instance type, scheduler kind, a removed cluster or fleet).
- ``data loss risk``: a file system or bucket is replaced or destroyed (storage removed, kind,
  deployment, region or encryption changed, capacity shrunk, the registry moved).
- ``node replacement``: nodes are terminated and relaunched or re-imaged (instance type, GPU,
  CPU, purchase option, reservation, placement colocation, NIC bandwidth/rails, GPUDirect).
- ``rolling restart``: daemons or pods restart with new configuration (Slurm partitions,
  accounting, health checks, containers, slurm.conf; model server, model, autoscaling).
- ``in place``: applied without disturbing anything running (node counts up or down, pool
  bounds, metadata, lint suppressions, traffic figures, access lists, workload facts).
  Node counts follow each provider's placement rules (`placement.py`): under a GCP compact
  placement policy a new node total replaces every compute VM.

Patterns are spec paths with list keys erased: ``storage[].capacity_tib`` matches
``storage[datasets].capacity_tib``. A pattern matches its own path and everything below it;
the longest matching pattern wins, so ``server.tensor_parallel`` refines ``server``. Some rows
carry a refinement that looks at the values (a capacity that shrinks, a Slurm version that
crosses a major release, a region list that only grows). Rows under kind ``*`` apply to
every kind. The TrainingCluster rows live in `policy_training.py`, the refinements in
`refine.py`; `archform diff --policy` prints the whole table.

Default for a path no row matches: ``node replacement``, stated as such in the reason. It is
deliberately conservative (a new field is assumed to reach the node image) without crying
outage; a test keeps every field of today's models covered by a real row.
"""

from __future__ import annotations

from dataclasses import dataclass

from archform.diff import refine
from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.policy_training import TRAINING_RULES
from archform.diff.refine import DATA, INPLACE, NODES, OUTAGE, ROLL, Rule

DEFAULT_IMPACT = Impact.NODE_REPLACEMENT
DEFAULT_REASON = (
    "no update-policy row for this field: assumed to reach the node image (conservative default)"
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The classification of one edit."""

    impact: Impact
    reason: str
    rule: str | None  # the matched pattern; None for the default


# --- the table ------------------------------------------------------------------------------

_F = "InferenceFleet"
_P = "Platform"

RULES: tuple[Rule, ...] = (
    # every kind
    Rule("*", "description", INPLACE, "metadata only: tags are updated in place"),
    Rule("*", "owner", INPLACE, "metadata only: tags are updated in place"),
    Rule("*", "labels", INPLACE, "metadata only: tags are updated in place"),
    Rule("*", "lint", INPLACE, "lint suppressions change what archform reports, nothing deployed"),
    *(
        Rule(
            kind,
            "placement.quotas",
            INPLACE,
            "a declared quota changes what validation counts against, nothing deployed",
        )
        for kind in ("TrainingCluster", _F)
    ),
    *TRAINING_RULES,
    # InferenceFleet
    Rule(
        _F,
        "placement.provider",
        OUTAGE,
        "another provider means new Kubernetes clusters in every region",
    ),
    Rule(_F, "placement.regions", OUTAGE, "regions changed", refine.fleet_regions),
    Rule(_F, "placement.region", OUTAGE, "regions changed", refine.fleet_regions),
    Rule(
        _F,
        "placement.network",
        OUTAGE,
        "a VPC/VNet, subnet, Service or pod range cannot change in place: each region's "
        "network and cluster are recreated",
    ),
    Rule(_F, "model", ROLL, "model servers load the new weights: pods roll one at a time"),
    Rule(_F, "server", ROLL, "the model-server deployment changes: pods roll one at a time"),
    Rule(
        _F,
        "server.tensor_parallel",
        ROLL,
        "GPUs per replica change: pods are rescheduled one at a time (capacity dips)",
    ),
    Rule(
        _F,
        "gpu_pool",
        NODES,
        "the GPU node pool is replaced: a new pool is created and the old one drained",
    ),
    Rule(
        _F,
        "gpu_pool.instance_type",
        NODES,
        "the GPU pools are replaced by pools of the new type",
        refine.gpu_instance_type,
    ),
    Rule(
        _F,
        "gpu_pool.min_nodes_per_region",
        INPLACE,
        "autoscaler bounds: nodes are added or removed, running pods stay",
    ),
    Rule(
        _F,
        "gpu_pool.max_nodes_per_region",
        INPLACE,
        "autoscaler bounds: nodes are added or removed, running pods stay",
    ),
    Rule(
        _F,
        "gpu_pool.on_demand_floor_per_region",
        INPLACE,
        "on-demand floor: nodes are added or removed, running pods stay",
    ),
    Rule(
        _F,
        "system_pool",
        NODES,
        "the system node pool is replaced: system pods move to the new pool",
    ),
    Rule(_F, "system_pool.nodes_per_region", INPLACE, "system pool size: nodes join or leave"),
    Rule(
        _F,
        "autoscaling",
        ROLL,
        "scaling policy changes: the autoscaler objects are re-applied and replicas re-balanced",
    ),
    Rule(_F, "traffic", INPLACE, "sizing figures feed estimates and lint only"),
    Rule(
        _F,
        "traffic.global_load_balancer",
        ROLL,
        "the global entry point is created or removed: clients switch endpoints",
    ),
    Rule(
        _F,
        "edge.protocol",
        ROLL,
        "the entry point's listeners change scheme and port (443 <-> the server port): "
        "clients switch URLs; the load balancers and the Service are updated in place",
    ),
    Rule(
        _F,
        "edge.domain",
        ROLL,
        "new managed certificates are issued for the new name (the old ones replaced): "
        "clients switch once its DNS validation and records are in place",
    ),
    Rule(
        _F,
        "edge.auth",
        ROLL,
        "the model servers restart with or without the API key: clients must change how they call",
    ),
    Rule(_F, "kubernetes.version", NODES, "Kubernetes version changed", refine.kubernetes_version),
    Rule(
        _F,
        "kubernetes.api_access_cidrs",
        INPLACE,
        "the API endpoint's access list is updated in place",
        refine.api_access,
    ),
    Rule(
        _F,
        "kubernetes.deployer",
        INPLACE,
        "the deployer's path to the APIs: network attachments or peerings and routes are "
        "added or removed beside the clusters, which keep running",
    ),
    Rule(
        _F,
        "kubernetes.deployer.cidrs",
        INPLACE,
        "routes to the deployer's ranges (or the public endpoint's access list) change in place",
    ),
    Rule(
        _F,
        "kubernetes.maintenance_window",
        INPLACE,
        "the weekly window is updated in place (GKE maintenance_policy, AKS "
        "maintenanceConfigurations): it only moves when future upgrades may start",
    ),
    # Platform
    Rule(_P, "training", ROLL, "the promotion pipeline is rewired to another training cluster"),
    Rule(
        _P,
        "inference",
        ROLL,
        "the promotion pipeline points at another fleet; it rolls on the next promotion",
    ),
    Rule(
        _P,
        "registry",
        DATA,
        "a new registry bucket is created: published models must be copied, the old "
        "versions are no longer served",
    ),
    Rule(_P, "promotion", INPLACE, "the promotion step's approval mode only"),
)


def rules_for(kind: str) -> list[Rule]:
    """The rows that apply to a document kind."""
    return [r for r in RULES if r.kind in (kind, "*")]


def lookup(kind: str, pattern: str) -> Rule | None:
    """The most specific row covering a key-erased path, or None."""
    best: Rule | None = None
    for rule in rules_for(kind):
        if rule.matches(pattern) and (best is None or len(rule.pattern) > len(best.pattern)):
            best = rule
    return best


def classify(kind: str, edit: Edit) -> Verdict:
    """Impact and reason of one edit in a document of the given kind."""
    rule = lookup(kind, edit.pattern)
    if rule is None:
        return Verdict(DEFAULT_IMPACT, DEFAULT_REASON, None)
    if rule.refine is not None:
        refined = rule.refine(edit)
        if refined is not None:
            return Verdict(refined[0], refined[1], rule.pattern)
    return Verdict(rule.impact, rule.reason, rule.pattern)

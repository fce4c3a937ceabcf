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

Patterns are spec paths with list keys erased: ``storage[].capacity_tib`` matches
``storage[datasets].capacity_tib``. A pattern matches its own path and everything below it;
the longest matching pattern wins, so ``server.tensor_parallel`` refines ``server``. Some rows
carry a refinement that looks at the values (a capacity that shrinks, a Slurm version that
crosses a major release, a region list that only grows). Rows under kind ``*`` apply to
every kind.

Default for a path no row matches: ``node replacement``, stated as such in the reason. It is
deliberately conservative (a new field is assumed to reach the node image) without crying
outage; a test keeps every field of today's models covered by a real row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.spec.models.training import SLURM_VERSIONS

OUTAGE = Impact.CLUSTER_WIDE_OUTAGE
DATA = Impact.DATA_LOSS_RISK
NODES = Impact.NODE_REPLACEMENT
ROLL = Impact.ROLLING_RESTART
INPLACE = Impact.IN_PLACE

Refine = Callable[[Edit], tuple[Impact, str] | None]

DEFAULT_IMPACT = Impact.NODE_REPLACEMENT
DEFAULT_REASON = (
    "no update-policy row for this field: assumed to reach the node image (conservative default)"
)


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the policy table."""

    kind: str
    pattern: str
    impact: Impact
    reason: str
    refine: Refine | None = None

    def matches(self, pattern: str) -> bool:
        """This row covers the (key-erased) path, itself or below it."""
        p = self.pattern
        return pattern == p or pattern.startswith((p + ".", p + "["))


@dataclass(frozen=True, slots=True)
class Verdict:
    """The classification of one edit."""

    impact: Impact
    reason: str
    rule: str | None  # the matched pattern; None for the default


# --- refinements ----------------------------------------------------------------------------


def _entry_added_removed(added: tuple[Impact, str], removed: tuple[Impact, str]) -> Refine:
    def refine(edit: Edit) -> tuple[Impact, str] | None:
        if edit.pattern.endswith("[]"):
            if edit.added:
                return added
            if edit.removed:
                return removed
        return None

    return refine


def _storage_entry(edit: Edit) -> tuple[Impact, str] | None:
    if edit.pattern != "storage[]":
        return None
    if edit.added:
        return INPLACE, "a new file system is created and mounted on every node"
    return DATA, "the file system is destroyed together with its data"


def _provider(edit: Edit) -> str:
    placement = edit.new_root.get("placement") or {}
    return str(placement.get("provider", ""))


def _capacity(edit: Edit) -> tuple[Impact, str] | None:
    if not isinstance(edit.old, int | float) or not isinstance(edit.new, int | float):
        return None
    kind = edit.sibling("kind")
    if edit.new < edit.old:
        if kind == "object" or (kind == "nfs" and _provider(edit) == "aws"):
            return INPLACE, "object storage and EFS are elastic: capacity is a figure, not a disk"
        return DATA, (
            "file system capacity cannot shrink: a new file system is created "
            "and the data must be copied"
        )
    if kind == "local_nvme":
        return NODES, "local NVMe comes with the instance: nodes are replaced to get more"
    if kind == "lustre" and _provider(edit) in ("gcp", "azure"):
        return DATA, (
            "archform assumes this managed Lustre cannot grow in place: a new file system "
            "is created and the data must be copied"
        )
    return INPLACE, "the file system grows online (FSx for Lustre, EFS/Filestore, on-prem OSTs)"


def _scratch_fixed(reason_ok: str) -> Refine:
    def refine(edit: Edit) -> tuple[Impact, str] | None:
        if edit.sibling("deployment") == "scratch" or edit.sibling("deployment", new=False) == (
            "scratch"
        ):
            return DATA, "a scratch file system is fixed at creation: a new one is created"
        return INPLACE, reason_ok

    return refine


def _slurm_version(edit: Edit) -> tuple[Impact, str] | None:
    old, new = str(edit.old), str(edit.new)
    if old[:5] == new[:5]:
        return ROLL, "Slurm maintenance release: the daemons restart one at a time"
    if new < old:
        return OUTAGE, "Slurm cannot be downgraded: controller state and accounting are rebuilt"
    reason = (
        "Slurm major upgrade: slurmdbd, then slurmctld, then every slurmd are upgraded; "
        "the controller is down while its state is converted"
    )
    if old[:5] in SLURM_VERSIONS and new[:5] in SLURM_VERSIONS:
        steps = SLURM_VERSIONS.index(new[:5]) - SLURM_VERSIONS.index(old[:5])
        if steps > 2:
            reason += f" ({steps} releases apart: upgrade in steps of at most two)"
    return OUTAGE, reason


def _regions_of(root: dict[str, object]) -> list[str]:
    placement = root.get("placement")
    if not isinstance(placement, dict):
        return []
    regions = placement.get("regions")
    if isinstance(regions, list):
        return [str(r) for r in regions]
    region = placement.get("region")
    return [str(region)] if region else []


def _training_region(edit: Edit) -> tuple[Impact, str] | None:
    if _regions_of(edit.old_root) == _regions_of(edit.new_root):
        return INPLACE, "the same region, written as `region` instead of `regions` or back"
    return None


def _fleet_regions(edit: Edit) -> tuple[Impact, str] | None:
    old, new = _regions_of(edit.old_root), _regions_of(edit.new_root)
    gone = [r for r in old if r not in new]
    added = [r for r in new if r not in old]
    if gone:
        return OUTAGE, (
            f"the regional cluster in {', '.join(gone)} is destroyed; its traffic fails over"
        )
    if added:
        return INPLACE, (
            f"a new regional cluster in {', '.join(added)} joins; existing regions are untouched"
        )
    return INPLACE, "the same regions, written differently"


def _kubernetes_version(edit: Edit) -> tuple[Impact, str] | None:
    def minor(text: object) -> int:
        return int(str(text).split(".")[1])

    if minor(edit.new) < minor(edit.old):
        return OUTAGE, "managed Kubernetes cannot downgrade: every regional cluster is recreated"
    return NODES, "control plane upgraded, then every node pool is replaced by a surge upgrade"


# --- the table ------------------------------------------------------------------------------

_T = "TrainingCluster"
_F = "InferenceFleet"
_P = "Platform"


def _groups() -> list[Rule]:
    rows: list[Rule] = []
    for prefix in ("compute", "compute.extra_groups[]"):
        rows += [
            Rule(_T, f"{prefix}.nodes", INPLACE,
                 "node count: new nodes join, or surplus nodes are drained and removed"),
            Rule(_T, f"{prefix}.instance_type", NODES,
                 "the instance type is fixed per instance: the group's nodes are relaunched"),
            Rule(_T, f"{prefix}.gpu", NODES,
                 "GPU model or count per node is hardware: the group's nodes are replaced"),
            Rule(_T, f"{prefix}.cpu", NODES,
                 "node hardware changes: nodes are re-provisioned and re-registered in Slurm"),
            Rule(_T, f"{prefix}.memory_gib", NODES,
                 "node hardware changes: nodes are re-provisioned and re-registered in Slurm"),
            Rule(_T, f"{prefix}.purchase", NODES,
                 "the purchase option is fixed at launch: nodes are relaunched under the new one"),
            Rule(_T, f"{prefix}.capacity_reservation_id", NODES,
                 "instances launch into a reservation: nodes are relaunched into the new one"),
            Rule(_T, f"{prefix}.name", NODES,
                 "node names derive from the group name: nodes are renamed and re-registered"),
        ]
    rows.append(Rule(
        _T, "compute.extra_groups[]", NODES,
        "unlisted node-group setting: assumed to replace the group's nodes",
        _entry_added_removed(
            (INPLACE, "a new node group joins; existing nodes are untouched"),
            (INPLACE, "the group's nodes are drained and removed; other groups are untouched"),
        ),
    ))
    return rows


RULES: tuple[Rule, ...] = (
    # every kind
    Rule("*", "description", INPLACE, "metadata only: tags are updated in place"),
    Rule("*", "owner", INPLACE, "metadata only: tags are updated in place"),
    Rule("*", "labels", INPLACE, "metadata only: tags are updated in place"),
    Rule("*", "lint", INPLACE, "lint suppressions change what archform reports, nothing deployed"),
    # TrainingCluster
    Rule(_T, "purpose", INPLACE, "purpose steers lint rules and defaults; nothing is redeployed"),
    Rule(_T, "placement.provider", OUTAGE,
         "another provider means a new cluster: nodes, network and file systems are rebuilt"),
    Rule(_T, "placement.region", OUTAGE,
         "every resource is recreated in the new region and the data must be copied",
         _training_region),
    Rule(_T, "placement.regions", OUTAGE,
         "every resource is recreated in the new region and the data must be copied",
         _training_region),
    Rule(_T, "placement.zones", OUTAGE,
         "subnets, placement group and file systems are zonal: moving zones recreates them all"),
    Rule(_T, "placement.colocation", NODES,
         "running instances cannot join or leave a placement group: nodes are relaunched"),
    Rule(_T, "placement.network", OUTAGE,
         "a VPC's CIDR cannot change: the network and everything attached to it is recreated"),
    *_groups(),
    Rule(_T, "compute.rack", INPLACE, "facility metadata; nothing is redeployed"),
    Rule(_T, "fabric.kind", OUTAGE,
         "the fabric decides NICs, drivers, network and NCCL transport: the whole cluster is "
         "re-provisioned"),
    Rule(_T, "fabric.topology", OUTAGE,
         "the network layout changes (recabling or new placement) and topology.conf needs "
         "slurmctld and every slurmd restarted together"),
    Rule(_T, "fabric.gbps_per_node", NODES,
         "per-node NIC count and speed are hardware and image level: nodes are replaced"),
    Rule(_T, "fabric.rails", NODES,
         "per-node NIC count and speed are hardware and image level: nodes are replaced"),
    Rule(_T, "fabric.gpudirect_rdma", NODES,
         "GPUDirect RDMA needs the peer-memory module in the node image: nodes are re-imaged"),
    Rule(_T, "fabric.sharp", ROLL,
         "SHARP is switched through the NCCL plugin environment: nodes restart their daemons"),
    Rule(_T, "fabric.hcas", ROLL,
         "NCCL environment (HCA list) changes: nodes pick it up as they restart"),
    Rule(_T, "fabric.socket_ifname", ROLL,
         "NCCL bootstrap interface changes: nodes pick it up as they restart"),
    Rule(_T, "fabric.roce", ROLL,
         "RoCE traffic class / GID index changes: nodes pick it up as they restart"),
    Rule(_T, "storage[]", DATA,
         "unlisted storage setting: assumed to need a new file system", _storage_entry),
    Rule(_T, "storage[].kind", DATA,
         "storage kind cannot change: a new file system is created and the data must be copied"),
    Rule(_T, "storage[].deployment", DATA,
         "deployment type is fixed at creation: a new file system is created and the data "
         "must be copied"),
    Rule(_T, "storage[].capacity_tib", DATA, "capacity changed", _capacity),
    Rule(_T, "storage[].encrypted", DATA,
         "encryption at rest is fixed at creation: a new file system is created and the data "
         "must be copied"),
    Rule(_T, "storage[].region", DATA,
         "the file system is recreated in another region and the data must be copied"),
    Rule(_T, "storage[].throughput_mbps_per_tib", INPLACE, "throughput changed",
         _scratch_fixed("the throughput tier of a persistent file system is changed online")),
    Rule(_T, "storage[].source", INPLACE, "data repository changed",
         _scratch_fixed("the data repository link is replaced; files already loaded stay")),
    Rule(_T, "storage[].mount", ROLL,
         "every node remounts at the new path; jobs using the old path break"),
    Rule(_T, "storage[].endpoint", ROLL, "every node remounts from the new server"),
    Rule(_T, "storage[].purpose", INPLACE, "purpose steers lint rules only; nothing is redeployed"),
    Rule(_T, "storage[].stripe_count", INPLACE,
         "default striping applies to newly written files only"),
    Rule(_T, "scheduler.kind", OUTAGE,
         "another scheduler is a new control plane: every running job stops"),
    Rule(_T, "scheduler.version", OUTAGE, "Slurm version changed", _slurm_version),
    Rule(_T, "scheduler.controller_instance_type", OUTAGE,
         "the controller is replaced: slurmctld is down while the new instance boots"),
    Rule(_T, "scheduler.backup_controller", ROLL,
         "SlurmctldHost list changes: daemons restart with the new slurm.conf"),
    Rule(_T, "scheduler.partitions", ROLL,
         "partitions are slurm.conf: `scontrol reconfigure`, the controller stays "
         "(cf. cluster-toolkit#2774, where a partition change replaced the controller)",
         _entry_added_removed(
             (ROLL, "partition added: slurm.conf reconfigure; running jobs continue"),
             (ROLL, "partition removed: slurm.conf reconfigure; its queued jobs are rejected"),
         )),
    Rule(_T, "scheduler.accounting", ROLL,
         "accounting storage changes slurm.conf and slurmdbd: the controller restarts"),
    Rule(_T, "scheduler.containers", ROLL,
         "pyxis is a SPANK plugin in plugstack.conf: slurmd restarts on every node"),
    Rule(_T, "scheduler.health_checks", ROLL,
         "HealthCheckProgram and DCGM settings change: slurmd restarts on every node"),
    Rule(_T, "scheduler.gres_autodetect", ROLL, "gres.conf changes: slurmd restarts"),
    Rule(_T, "scheduler.slurm_conf", ROLL,
         "slurm.conf overrides: daemons restart with the new configuration"),
    Rule(_T, "scheduler.elastic", NODES,
         "static and power-saving CLOUD nodes are launched differently: nodes are recreated"),
    Rule(_T, "scheduler.login_nodes", INPLACE,
         "login nodes are added or removed; compute nodes are untouched"),
    Rule(_T, "training", INPLACE, "workload facts feed lint rules and estimates only"),
    Rule(_T, "access", INPLACE, "firewall rules are updated in place"),
    Rule(_T, "hosts", NODES, "the inventory now names every host: nodes are re-registered"),
    Rule(_T, "hosts.connection", INPLACE, "how Ansible reaches the hosts; nothing on them"),
    Rule(_T, "hosts.controller", OUTAGE, "the controller host changes: slurmctld moves"),
    Rule(_T, "hosts.login", INPLACE, "login hosts change; compute nodes are untouched"),
    Rule(_T, "hosts.compute", NODES, "the host's inventory entry changes: it is re-provisioned",
         _entry_added_removed(
             (INPLACE, "host added: it is provisioned and joins"),
             (INPLACE, "host removed: it is drained and leaves"),
         )),
    Rule(_T, "hosts.compute[].address", NODES,
         "the host's address changes: it is re-provisioned and re-registered"),
    # InferenceFleet
    Rule(_F, "placement.provider", OUTAGE,
         "another provider means new Kubernetes clusters in every region"),
    Rule(_F, "placement.regions", OUTAGE, "regions changed", _fleet_regions),
    Rule(_F, "placement.region", OUTAGE, "regions changed", _fleet_regions),
    Rule(_F, "model", ROLL, "model servers load the new weights: pods roll one at a time"),
    Rule(_F, "server", ROLL, "the model-server deployment changes: pods roll one at a time"),
    Rule(_F, "server.tensor_parallel", ROLL,
         "GPUs per replica change: pods are rescheduled one at a time (capacity dips)"),
    Rule(_F, "gpu_pool", NODES,
         "the GPU node pool is replaced: a new pool is created and the old one drained"),
    Rule(_F, "gpu_pool.min_nodes_per_region", INPLACE,
         "autoscaler bounds: nodes are added or removed, running pods stay"),
    Rule(_F, "gpu_pool.max_nodes_per_region", INPLACE,
         "autoscaler bounds: nodes are added or removed, running pods stay"),
    Rule(_F, "gpu_pool.on_demand_floor_per_region", INPLACE,
         "on-demand floor: nodes are added or removed, running pods stay"),
    Rule(_F, "system_pool", NODES,
         "the system node pool is replaced: system pods move to the new pool"),
    Rule(_F, "system_pool.nodes_per_region", INPLACE, "system pool size: nodes join or leave"),
    Rule(_F, "autoscaling", ROLL,
         "scaling policy changes: the autoscaler objects are re-applied and replicas re-balanced"),
    Rule(_F, "traffic", INPLACE, "sizing figures feed estimates and lint only"),
    Rule(_F, "traffic.global_load_balancer", ROLL,
         "the global entry point is created or removed: clients switch endpoints"),
    Rule(_F, "kubernetes.version", NODES, "Kubernetes version changed", _kubernetes_version),
    Rule(_F, "kubernetes.api_access_cidrs", INPLACE,
         "the API endpoint's access list is updated in place"),
    # Platform
    Rule(_P, "training", ROLL,
         "the promotion pipeline is rewired to another training cluster"),
    Rule(_P, "inference", ROLL,
         "the promotion pipeline points at another fleet; it rolls on the next promotion"),
    Rule(_P, "registry", DATA,
         "a new registry bucket is created: published models must be copied, the old "
         "versions are no longer served"),
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

"""Node-count and colocation changes judged by each provider's placement rules (TrainingCluster).

Whether adding or removing nodes disturbs the nodes already running depends on the cloud's
co-location primitive, as archform's generated program uses it:

- GCP, ``colocation: cluster``: one compact placement policy (``gcp.compute.ResourcePolicy``,
  ``group_placement_policy: {collocation: COLLOCATED, vm_count: <every node of every group>}``)
  that every compute VM references (templates/pulumi/gcp/compute.py.j2). ``vm_count`` is
  ForceNew in the provider schema the Pulumi bridge is built from
  (https://github.com/hashicorp/terraform-provider-google/blob/ecac8d86f48a0149e9c0d3365b8028715d251733/google/services/compute/resource_compute_resource_policy.go,
  ``group_placement_policy.vm_count``), and the same schema says that with a COLLOCATED
  policy "exactly vm_count instances must be created at the same time with the resource
  policy attached" (pulumi-gcp 10.2.0, ``ResourcePolicyGroupPlacementPolicyArgs``). So a new
  node total replaces the policy, and every VM that references it is replaced with it:
  pulumi-gcp's ``Instance.resource_policies`` says "Modifying this list will cause the
  instance to recreate", and Cluster Toolkit forces the same replacement on purpose
  (https://github.com/GoogleCloudPlatform/cluster-toolkit/pull/1849, "Forces VMs to be
  replaced when placement policy is destroyed", 2023-10-18).
  Without compact placement, VMs are created or deleted one by one, except that archform
  numbers the compute VMs' static addresses in group order (render/targets/gcp/training.py),
  so a count change in one group shifts the addresses of the groups after it: their VMs
  are stopped to take the new address (the program sets allow_stopping_for_update).
- AWS: a cluster placement group (``aws.ec2.PlacementGroup``) has no size; new instances
  launch into the existing group and removed ones terminate alone. AWS warns that adding
  instances to a cluster placement group later raises the chance of an insufficient-capacity
  error (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-strategies.html,
  "Cluster placement groups").
- Azure: a node group is one Uniform scale set; its node count is the scale set's
  ``sku.capacity``, changed in place: scale-out adds VMs, scale-in deletes VMs
  (https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-scale-in-policy);
  the 100-VM limit of a single placement group is refused when the blueprint loads.
- on-prem: hosts are provisioned or drained one by one.

Sources checked 2026-12-02.
"""

from __future__ import annotations

from typing import Any

from archform.diff.changes import Edit
from archform.diff.impact import Impact

Verdict = tuple[Impact, str]

PR_1849 = "https://github.com/GoogleCloudPlatform/cluster-toolkit/pull/1849"


def _placement(root: dict[str, Any]) -> dict[str, Any]:
    placement = root.get("placement")
    return placement if isinstance(placement, dict) else {}


def _gcp_compact(edit: Edit) -> bool:
    """Either version is a GCP cluster under one COLLOCATED placement policy."""
    return any(
        _placement(root).get("provider") == "gcp"
        and _placement(root).get("colocation", "cluster") == "cluster"
        for root in (edit.old_root, edit.new_root)
    )


def _has_gpus(group: dict[str, Any], primary: Any) -> bool:
    """A node group with GPUs: only those are under the compact policy.

    CPU groups (a debug partition) stay outside it (templates/pulumi/gcp/compute.py.j2).
    """
    if isinstance(group.get("gpu"), dict):
        return True
    from archform.spec.catalog import load_catalog

    kind = group.get("instance_type", primary)
    info = load_catalog().instance(kind) if isinstance(kind, str) else None
    return info is None or info.gpu_count > 0  # unknown: counted, the conservative verdict


def _total(root: dict[str, Any]) -> int:
    """The compact policy's vm_count: the nodes of every GPU group."""
    compute = root.get("compute")
    if not isinstance(compute, dict):
        return 0
    primary = compute.get("instance_type")
    groups = [compute, *[g for g in compute.get("extra_groups") or [] if isinstance(g, dict)]]
    return sum(
        g["nodes"] for g in groups if isinstance(g.get("nodes"), int) and _has_gpus(g, primary)
    )


def _gcp_replacement(edit: Edit) -> Verdict:
    old, new = _total(edit.old_root), _total(edit.new_root)
    return Impact.NODE_REPLACEMENT, (
        f"the compact placement policy's vm_count is the node total ({old} -> {new}): "
        "vm_count cannot change in place and a COLLOCATED policy places exactly vm_count VMs "
        "created together, so the policy is replaced and every compute VM that references it "
        f"is replaced with it (as Cluster Toolkit does, {PR_1849})"
    )


_IN_PLACE: dict[str, str] = {
    "gcp": "node count: VMs are created or deleted one by one (no compact placement policy)",
    "aws": "node count: new instances launch into the existing cluster placement group and "
    "surplus ones are drained and terminated; AWS warns that instances added to a cluster "
    "placement group later may fail with insufficient capacity",
    "azure": "node count is the scale set's capacity, changed in place: VMs are added, or "
    "surplus VMs are drained and deleted",
    "onprem": "node count: new hosts are provisioned and join, or surplus hosts are drained",
}


def _provider(edit: Edit) -> str:
    return str(_placement(edit.new_root).get("provider", ""))


def _gcp_starts(root: dict[str, Any]) -> dict[str, int]:
    """Each node group's first static-address offset, in the order the GCP program numbers them."""
    compute = root.get("compute")
    if not isinstance(compute, dict):
        return {}
    groups = [{"name": compute.get("name", "gpu"), "nodes": compute.get("nodes")}]
    groups += [g for g in compute.get("extra_groups") or [] if isinstance(g, dict)]
    starts: dict[str, int] = {}
    offset = 0
    for group in groups:
        starts[str(group.get("name"))] = offset
        nodes = group.get("nodes")
        offset += nodes if isinstance(nodes, int) else 0
    return starts


def _gcp_shifted(edit: Edit) -> list[str]:
    """Node groups present in both versions whose addresses start elsewhere."""
    if _provider(edit) != "gcp":
        return []
    old, new = _gcp_starts(edit.old_root), _gcp_starts(edit.new_root)
    return [name for name in new if name in old and old[name] != new[name]]


def _gcp_readdressed(shifted: list[str]) -> Verdict:
    return Impact.NODE_REPLACEMENT, (
        f"the static addresses of node group(s) {', '.join(shifted)} shift (GCP compute "
        "addresses are numbered in group order): their VMs are stopped and readdressed, and "
        "Slurm must learn the new addresses"
    )


def node_count(edit: Edit) -> Verdict | None:
    """A group's `nodes` changed: in place, except under a GCP compact placement policy."""
    if _gcp_compact(edit) and _total(edit.old_root) != _total(edit.new_root):
        return _gcp_replacement(edit)
    shifted = _gcp_shifted(edit)
    if shifted:
        return _gcp_readdressed(shifted)
    reason = _IN_PLACE.get(_provider(edit))
    return (Impact.IN_PLACE, reason) if reason is not None else None


def group_added_removed(edit: Edit) -> Verdict | None:
    """An extra node group added or removed: the others stay, except under GCP compact placement."""
    if not edit.pattern.endswith("[]") or not (edit.added or edit.removed):
        return None
    if _gcp_compact(edit) and _total(edit.old_root) != _total(edit.new_root):
        return _gcp_replacement(edit)
    shifted = _gcp_shifted(edit)
    if shifted:
        return _gcp_readdressed(shifted)
    if edit.added:
        return Impact.IN_PLACE, "a new node group joins; existing nodes are untouched"
    return Impact.IN_PLACE, "the group's nodes are drained and removed; other groups are untouched"


def _collocated(root: dict[str, Any]) -> bool:
    return bool(_placement(root).get("colocation", "cluster") == "cluster")


def _aws_group(root: dict[str, Any]) -> bool:
    """The AWS program creates a cluster placement group (none for Capacity Blocks only)."""
    compute = root.get("compute")
    groups = [compute, *(compute.get("extra_groups") or [])] if isinstance(compute, dict) else []
    return _collocated(root) and any(
        isinstance(g, dict) and g.get("purchase") != "capacity_block" for g in groups
    )


def colocation(edit: Edit) -> Verdict | None:
    """`placement.colocation` changed: what each provider's generated program does with it.

    GCP creates its compact policy, and AWS its cluster placement group, only for
    ``cluster``: a flip to or from ``cluster`` adds or removes it, and running VMs cannot
    join or leave one (GCP: pulumi-gcp ``Instance.resource_policies`` recreates the
    instance; AWS: an instance's placement group is chosen at launch); ``spread`` <->
    ``none`` changes no resource. Azure's node group is always one scale set with
    singlePlacementGroup=true and platformFaultDomainCount=1 (templates/pulumi/azure), and
    on-prem placement is physical: the field changes nothing deployed there.
    """
    provider = _provider(edit)
    flips = _collocated(edit.old_root) != _collocated(edit.new_root)
    if provider == "gcp":
        if flips:
            return Impact.NODE_REPLACEMENT, (
                "the compact placement policy is added or removed and every compute VM that "
                f"references it is recreated ({PR_1849})"
            )
        return Impact.IN_PLACE, "no compact placement policy either way: nothing changes"
    if provider == "aws":
        if _aws_group(edit.old_root) != _aws_group(edit.new_root):
            return Impact.NODE_REPLACEMENT, (
                "the cluster placement group is added or removed; an instance's placement "
                "group is fixed at launch: nodes are relaunched"
            )
        return Impact.IN_PLACE, "no placement group either way: nothing changes"
    if provider == "azure":
        return Impact.IN_PLACE, (
            "archform's Azure node group is always one scale set with a single placement "
            "group (InfiniBand needs it), whatever colocation says: nothing changes"
        )
    if provider == "onprem":
        return Impact.IN_PLACE, "on-prem placement is physical: nothing archform deploys changes"
    return None

"""GCP change impact: the compact placement policy and the static compute addresses.

``colocation: cluster`` is one compact placement policy (``gcp.compute.ResourcePolicy``,
``group_placement_policy: {collocation: COLLOCATED, vm_count: <every node of every group>}``)
that every compute VM references (templates/pulumi/compute.py). ``vm_count`` is
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
numbers the compute VMs' static addresses in group order (providers/gcp/render/training.py),
so a count change in one group shifts the addresses of the groups after it: their VMs
are stopped to take the new address (the program sets allow_stopping_for_update).

Sources checked 2026-12-02.
"""

from __future__ import annotations

from typing import Any

from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.placement import Verdict, collocated, placement_of
from archform.diff.provider import ProviderDiff, provider_of
from archform.diff.provider_base import DiffBase

PR_1849 = "https://github.com/GoogleCloudPlatform/cluster-toolkit/pull/1849"


def _gcp_compact(edit: Edit) -> bool:
    """Either version is a GCP cluster under one COLLOCATED placement policy."""
    return any(
        placement_of(root).get("provider") == "gcp"
        and placement_of(root).get("colocation", "cluster") == "cluster"
        for root in (edit.old_root, edit.new_root)
    )


def _has_gpus(group: dict[str, Any], primary: Any) -> bool:
    """A node group with GPUs: only those are under the compact policy.

    CPU groups (a debug partition) stay outside it (templates/pulumi/compute.py).
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
    if provider_of(edit.new_root) != "gcp":
        return []
    old, new = _gcp_starts(edit.old_root), _gcp_starts(edit.new_root)
    return [name for name in new if name in old and old[name] != new[name]]


def _gcp_readdressed(shifted: list[str]) -> Verdict:
    return Impact.NODE_REPLACEMENT, (
        f"the static addresses of node group(s) {', '.join(shifted)} shift (GCP compute "
        "addresses are numbered in group order): their VMs are stopped and readdressed, and "
        "Slurm must learn the new addresses"
    )


class GcpDiff(DiffBase):
    """GCE training clusters, GKE fleets."""

    # Managed Lustre grows online ("You can continue to use your instance while the update
    # operation is taking place", https://cloud.google.com/managed-lustre/docs/increase-capacity),
    # and the provider updates capacityGib in place (PATCH with an update mask; the field is
    # not immutable: GoogleCloudPlatform/magic-modules mmv1/products/lustre/Instance.yaml at
    # 055860e). The new size must stay a multiple of the tier's step size.
    lustre_grows = True
    # https://cloud.google.com/kubernetes-engine/docs/how-to/node-pools#deleting_a_node_pool
    node_pool = "node pool"
    # https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades
    kubernetes_upgrade = (
        "the regional GKE control plane is upgraded replica by replica, then each "
        "node pool surge-upgrades (max surge 1)"
    )
    # https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation
    # (in place: `gcloud container clusters update --enable-private-endpoint`)
    api_flip_in_place = "GKE updates the endpoint"
    node_count_in_place = (
        "node count: VMs are created or deleted one by one (no compact placement policy)"
    )

    def node_change(self, edit: Edit) -> Verdict | None:
        """The compact policy's node total, or the static addresses of later groups."""
        if _gcp_compact(edit) and _total(edit.old_root) != _total(edit.new_root):
            return _gcp_replacement(edit)
        shifted = _gcp_shifted(edit)
        return _gcp_readdressed(shifted) if shifted else None

    def colocation(self, edit: Edit) -> Verdict | None:
        """The compact placement policy exists for ``cluster`` only."""
        if collocated(edit.old_root) != collocated(edit.new_root):
            return Impact.NODE_REPLACEMENT, (
                "the compact placement policy is added or removed and every compute VM that "
                f"references it is recreated ({PR_1849})"
            )
        return Impact.IN_PLACE, "no compact placement policy either way: nothing changes"


DIFF: ProviderDiff = GcpDiff()

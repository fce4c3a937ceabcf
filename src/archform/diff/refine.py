"""Policy rows, and refinements: impact decided by the values, not only the field.

Each takes an `Edit` and returns (impact, reason), or None to keep the row's own verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.provider import ProviderDiff, diff_of, provider_of
from archform.diff.provider_base import DiffBase
from archform.spec import slurm
from archform.spec.addresses import public_addresses

OUTAGE = Impact.CLUSTER_WIDE_OUTAGE
DATA = Impact.DATA_LOSS_RISK
NODES = Impact.NODE_REPLACEMENT
ROLL = Impact.ROLLING_RESTART
INPLACE = Impact.IN_PLACE

Refine = Callable[[Edit], tuple[Impact, str] | None]
GENERIC: ProviderDiff = DiffBase()


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


def entry_added_removed(added: tuple[Impact, str], removed: tuple[Impact, str]) -> Refine:
    """Separate verdicts for a list entry added or removed (by name)."""

    def refine(edit: Edit) -> tuple[Impact, str] | None:
        if edit.pattern.endswith("[]"):
            if edit.added:
                return added
            if edit.removed:
                return removed
        return None

    return refine


def storage_entry(edit: Edit) -> tuple[Impact, str] | None:
    """A file system added (created, in place) or removed (destroyed with its data)."""
    if edit.pattern != "storage[]":
        return None
    if edit.added:
        return INPLACE, "a new file system is created and mounted on every node"
    return DATA, "the file system is destroyed together with its data"


def _part(edit: Edit) -> ProviderDiff:
    """The new version's provider's diff part (the generic one for an unknown name)."""
    return diff_of(provider_of(edit.new_root)) or GENERIC


def capacity(edit: Edit) -> tuple[Impact, str] | None:
    """Capacity down: a new file system; up: online growth, except where it cannot grow."""
    if not isinstance(edit.old, int | float) or not isinstance(edit.new, int | float):
        return None
    kind = edit.sibling("kind")
    if edit.new < edit.old:
        if kind == "object" or (kind == "nfs" and _part(edit).elastic_nfs):
            return INPLACE, "object storage and EFS are elastic: capacity is a figure, not a disk"
        return DATA, (
            "file system capacity cannot shrink: a new file system is created "
            "and the data must be copied"
        )
    if kind == "local_nvme":
        return NODES, "local NVMe comes with the instance: nodes are replaced to get more"
    if kind == "lustre" and not _part(edit).lustre_grows:
        return DATA, (
            "archform assumes this managed Lustre cannot grow in place: a new file system "
            "is created and the data must be copied"
        )
    return (
        INPLACE,
        "the file system grows online (FSx for Lustre, Google Managed Lustre, EFS/Filestore, "
        "on-prem OSTs)",
    )


def scratch_fixed(reason_ok: str) -> Refine:
    """Settings fixed at creation on a scratch file system, changeable on a persistent one."""

    def refine(edit: Edit) -> tuple[Impact, str] | None:
        if edit.sibling("deployment") == "scratch" or edit.sibling("deployment", new=False) == (
            "scratch"
        ):
            return DATA, "a scratch file system is fixed at creation: a new one is created"
        return INPLACE, reason_ok

    return refine


def slurm_version(edit: Edit) -> tuple[Impact, str] | None:
    """Maintenance release: rolling; major release or downgrade: controller outage."""
    try:
        old, new = slurm.parse_version(str(edit.old)), slurm.parse_version(str(edit.new))
    except ValueError:
        return None
    if old.release == new.release:
        return ROLL, "Slurm maintenance release: the daemons restart one at a time"
    if new < old:
        return OUTAGE, "Slurm cannot be downgraded: controller state and accounting are rebuilt"
    reason = (
        "Slurm major upgrade: slurmdbd, then slurmctld, then every slurmd are upgraded; "
        "the controller is down while its state is converted"
    )
    if slurm.is_supported(old) and slurm.is_supported(new):
        # Upgrades keep jobs and state from the two previous major releases, three from 24.11
        # on (https://slurm.schedmd.com/upgrades.html, "Compatibility Window").
        steps = slurm.release_index(new.release) - slurm.release_index(old.release)
        window = slurm.upgrade_window(new)
        if steps > window:
            reason += (
                f" ({steps} releases apart: Slurm {new.release} upgrades from at most {window} "
                "releases back, so upgrade in steps or lose job state)"
            )
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


def training_region(edit: Edit) -> tuple[Impact, str] | None:
    """`region` rewritten as `regions` (or back) with the same value is no move."""
    if _regions_of(edit.old_root) == _regions_of(edit.new_root):
        return INPLACE, "the same region, written as `region` instead of `regions` or back"
    return None


def fleet_regions(edit: Edit) -> tuple[Impact, str] | None:
    """A region added joins in place; a region removed takes its cluster down."""
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


# --- InferenceFleet: what each provider does with a GPU type, version or endpoint change ---
# The words and their sources are each provider's (archform/providers/<name>/diff.py).


def gpu_instance_type(edit: Edit) -> tuple[Impact, str] | None:
    """GPU type change: a new pool per region under a type-derived name, then the old drained."""
    pool = _part(edit).node_pool
    return NODES, (
        f"a new GPU {pool} per region under a name derived from {edit.new} is created beside "
        f"the old one, then the old {pool} is deleted and its nodes drained (pods reschedule "
        "onto the new pool within the PodDisruptionBudget); needs both pools' GPU quota at once"
    )


def kubernetes_version(edit: Edit) -> tuple[Impact, str] | None:
    """Upgrade: control plane in place, then the pinned node pools; skips and downgrades refused."""

    def minor(text: object) -> int:
        return int(str(text).split(".")[1])

    old, new = minor(edit.old), minor(edit.new)
    if new < old:
        return OUTAGE, "managed Kubernetes cannot downgrade: every regional cluster is recreated"
    if new - old > 1:
        return NODES, (
            f"refused as written: EKS, GKE and AKS upgrade one minor version at a time "
            f"(1.{old} -> 1.{new} skips {new - old - 1}); apply each minor in turn"
        )
    steps = _part(edit).kubernetes_upgrade
    return NODES, steps or "control plane upgraded, then every node pool is replaced"


def _private(cidrs: object) -> bool:
    """No range admits a public address: the fleet program then opens no public endpoint.

    The same arithmetic as the program's (render/targets/fleet/view.py): IANA's
    not-globally-reachable blocks (spec/data/addresses.yaml), not Python's `is_private`,
    which calls shared address space (100.64.0.0/10, RFC 6598) public.
    """
    values = [str(c) for c in cidrs] if isinstance(cidrs, list) else []
    return all(public_addresses(c) == 0 for c in values)


def api_access(edit: Edit) -> tuple[Impact, str] | None:
    """Allow-list edits are in place; a private/public flip depends on the provider."""
    if _private(edit.old) == _private(edit.new):
        return INPLACE, "the API endpoint's access list is updated in place"
    to = "private" if _private(edit.new) else "public (restricted to the listed ranges)"
    part = _part(edit)
    if part.api_flip_recreates is not None:
        return OUTAGE, part.api_flip_recreates.format(to=to)
    where = part.api_flip_in_place or "the provider updates it"
    return INPLACE, (
        f"the API server becomes {to}; {where} in place (the deployer must still reach it "
        "afterwards)"
    )

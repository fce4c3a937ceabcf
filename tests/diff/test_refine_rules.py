"""The value-dependent refinements of the diff policy (diff/refine.py), one edit at a time.

Each case builds the `Edit` the structural comparison would produce and calls the refinement
directly, so these run in well under a second (the mutation target `refine` runs them once
per mutant). The expected verdicts come from the policy's documented classes (diff/policy.py
module docstring) and from the providers' and Slurm's own documentation, cited per case;
tests/diff/test_impact_table.py checks the same verdicts end to end through the loader.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from archform.diff import refine
from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.refine import Rule

OUTAGE = Impact.CLUSTER_WIDE_OUTAGE
DATA = Impact.DATA_LOSS_RISK
NODES = Impact.NODE_REPLACEMENT
ROLL = Impact.ROLLING_RESTART
INPLACE = Impact.IN_PLACE


def _edit(
    path: str,
    pattern: str,
    loc: tuple[str, ...],
    old: Any,
    new: Any,
    old_root: dict[str, Any] | None = None,
    new_root: dict[str, Any] | None = None,
) -> Edit:
    return Edit(path, pattern, loc, old, new, old_root or {}, new_root or {})


# ---------------------------------------------------------------- Rule.matches


@pytest.mark.parametrize(
    ("row", "path", "covered"),
    [
        ("server", "server", True),  # its own path
        ("server", "server.tensor_parallel", True),  # a field below it
        ("storage", "storage[]", True),  # a list entry below it
        ("storage", "storage[].capacity_tib", True),
        ("server", "server_image", False),  # a sibling that merely starts the same
        ("storage[].kind", "storage[]", False),  # above the row, not below it
        ("scheduler.partitions", "scheduler", False),
    ],
)
def test_a_row_covers_its_path_and_everything_below_it(row: str, path: str, covered: bool) -> None:
    # policy.py: "A pattern matches its own path and everything below it". The comparison
    # builds each path at run time (changes._join), never the literal the row was written with
    built = "".join(list(path))
    assert Rule("TrainingCluster", row, INPLACE, "r").matches(built) is covered


def test_a_policy_row_cannot_be_changed_by_a_caller() -> None:
    # the rows are one module-level table shared by every lookup (policy.RULES): a row a
    # caller could rewrite would change the verdict of every later diff in the process
    row = Rule("TrainingCluster", "server", INPLACE, "r")
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.impact = OUTAGE  # type: ignore[misc]
    assert row.impact == INPLACE


# ---------------------------------------------------------------- list entries


ADDED = (ROLL, "added")
REMOVED = (INPLACE, "removed")


def test_an_entry_added_or_removed_gets_its_own_verdict() -> None:
    pick = refine.entry_added_removed(ADDED, REMOVED)
    loc = ("scheduler", "partitions", "[debug]")
    entry = {"name": "debug", "nodes": ["gpu"]}
    pattern = "scheduler.partitions[]"
    path = "scheduler.partitions[debug]"
    assert pick(_edit(path, pattern, loc, None, entry)) == ADDED
    assert pick(_edit(path, pattern, loc, entry, None)) == REMOVED


def test_a_field_inside_an_entry_keeps_the_rows_verdict() -> None:
    pick = refine.entry_added_removed(ADDED, REMOVED)
    loc = ("scheduler", "partitions", "[debug]", "default")
    pattern = "scheduler.partitions[].default"
    path = "scheduler.partitions[debug].default"
    # a field that appears or disappears inside an entry is not the entry added or removed
    assert pick(_edit(path, pattern, loc, None, True)) is None
    assert pick(_edit(path, pattern, loc, True, None)) is None
    assert pick(_edit(path, pattern, loc, False, True)) is None


def _fs(provider: str, **fields: Any) -> dict[str, Any]:
    return {"placement": {"provider": provider}, "storage": [{"name": "data", **fields}]}


def test_a_file_system_added_is_created_and_one_removed_loses_its_data() -> None:
    loc = ("storage", "[data]")
    entry = {"name": "data", "kind": "lustre", "capacity_tib": 24}
    # policy.py: data loss risk is "a file system ... destroyed (storage removed ...)"
    added = refine.storage_entry(_edit("storage[data]", "storage[]", loc, None, entry))
    removed = refine.storage_entry(_edit("storage[data]", "storage[]", loc, entry, None))
    assert added is not None and added[0] == INPLACE
    assert removed is not None and removed[0] == DATA


def test_a_storage_field_is_not_an_entry_change() -> None:
    loc = ("storage", "[data]", "mount")
    edit = _edit("storage[data].mount", "storage[].mount", loc, "/data", "/datasets")
    assert refine.storage_entry(edit) is None


# ---------------------------------------------------------------- storage capacity


def _capacity(provider: str, kind: str, old: Any, new: Any) -> tuple[Impact, str] | None:
    return refine.capacity(
        _edit(
            "storage[data].capacity_tib",
            "storage[].capacity_tib",
            ("storage", "[data]", "capacity_tib"),
            old,
            new,
            _fs(provider, kind=kind, capacity_tib=old),
            _fs(provider, kind=kind, capacity_tib=new),
        )
    )


def _impact(verdict: tuple[Impact, str] | None) -> Impact:
    assert verdict is not None
    return verdict[0]


@pytest.mark.parametrize("provider", ["aws", "azure", "gcp", "onprem"])
def test_a_shrunk_lustre_file_system_is_a_new_one(provider: str) -> None:
    # FSx for Lustre: "You can only increase the amount of storage capacity on a file system;
    # you cannot decrease storage capacity" (docs.aws.amazon.com/fsx/latest/LustreGuide/
    # managing-storage-capacity.html); Azure Managed Lustre's size cannot be changed after
    # creation (learn.microsoft.com/azure/azure-managed-lustre/create-file-system-portal);
    # Google Managed Lustre: "Capacity cannot be decreased"
    # (cloud.google.com/managed-lustre/docs/increase-capacity)
    assert _impact(_capacity(provider, "lustre", 48, 24)) == DATA
    assert _impact(_capacity(provider, "lustre", 48.5, 48.0)) == DATA


def test_shrinking_object_storage_or_efs_is_only_a_figure() -> None:
    # S3/GCS/Blob have no provisioned size; EFS is elastic: "automatically grows and shrinks"
    # (docs.aws.amazon.com/efs/latest/ug/whatisefs.html)
    assert _impact(_capacity("gcp", "object", 100, 10)) == INPLACE
    assert _impact(_capacity("aws", "nfs", 100, 10)) == INPLACE
    # Filestore (GCP) and Azure NFS shares are provisioned: a smaller one is a new share
    assert _impact(_capacity("gcp", "nfs", 100, 10)) == DATA
    assert _impact(_capacity("azure", "nfs", 100, 10)) == DATA


@pytest.mark.parametrize("kind", ["lustre", "gpfs", "weka"])
def test_only_object_storage_and_efs_shrink_as_a_figure(kind: str) -> None:
    # policy.py: "capacity shrunk" is data loss risk; object storage and EFS are the elastic
    # exceptions, and on AWS (EFS elastic) that holds for `nfs` only, not other kinds
    assert _impact(_capacity("aws", kind, 100, 10)) == DATA


def test_more_local_nvme_means_other_instances() -> None:
    # instance store comes with the instance type (docs.aws.amazon.com/AWSEC2/latest/UserGuide/
    # InstanceStorage.html): more of it is a bigger instance, so nodes are replaced
    assert _impact(_capacity("aws", "local_nvme", 8, 16)) == NODES


def test_lustre_growth_follows_the_provider() -> None:
    # FSx for Lustre grows online ("Increasing storage capacity", LustreGuide); Azure Managed
    # Lustre's size is fixed at creation (create-file-system-portal, "can't be changed after
    # you create your file system"); Google Managed Lustre's capacity can be increased while
    # the instance is in use (cloud.google.com/managed-lustre/docs/increase-capacity) and
    # capacityGib is not immutable in the provider (magic-modules mmv1/products/lustre/
    # Instance.yaml); on-prem OSTs are added to a running file system
    assert _impact(_capacity("aws", "lustre", 24, 48)) == INPLACE
    assert _impact(_capacity("gcp", "lustre", 24, 48)) == INPLACE
    assert _impact(_capacity("azure", "lustre", 24, 48)) == DATA
    assert _impact(_capacity("onprem", "lustre", 24, 48)) == INPLACE
    # other kinds grow in place everywhere (EFS/Filestore resize up, object has no size)
    assert _impact(_capacity("azure", "nfs", 24, 48)) == INPLACE
    assert _impact(_capacity("gcp", "object", 24, 48)) == INPLACE


@pytest.mark.parametrize("provider", ["aws", "azure", "gcp", "onprem"])
@pytest.mark.parametrize("kind", ["gpfs", "weka"])
def test_self_managed_parallel_file_systems_grow_in_place(kind: str, provider: str) -> None:
    # Storage Scale adds disks to a mounted file system (mmadddisk, IBM Storage Scale docs) and
    # WEKA adds drives to a running cluster: neither is a managed service with a fixed size,
    # so the provider's managed-Lustre limits do not apply
    assert _impact(_capacity(provider, kind, 100, 200)) == INPLACE


def test_a_capacity_that_appears_or_is_not_a_number_keeps_the_rows_verdict() -> None:
    assert _capacity("aws", "lustre", None, 24) is None
    assert _capacity("aws", "lustre", 24, None) is None
    assert _capacity("aws", "lustre", "24", 48) is None


def test_an_unknown_provider_gets_the_generic_words() -> None:
    # DiffBase: Lustre grows, NFS is not elastic
    assert _impact(_capacity("nosuchcloud", "lustre", 24, 48)) == INPLACE
    assert _impact(_capacity("nosuchcloud", "nfs", 24, 12)) == DATA


# ---------------------------------------------------------------- scratch file systems

OK = "throughput changes online"


def _deployment(old: str, new: str) -> tuple[Impact, str] | None:
    edit = _edit(
        "storage[data].throughput_mbps_per_tib",
        "storage[].throughput_mbps_per_tib",
        ("storage", "[data]", "throughput_mbps_per_tib"),
        125,
        250,
        _fs("aws", kind="lustre", deployment=old),
        _fs("aws", kind="lustre", deployment=new),
    )
    return refine.scratch_fixed(OK)(edit)


def test_scratch_settings_are_fixed_at_creation() -> None:
    # FSx for Lustre: throughput can be changed on persistent SSD file systems only
    # (docs.aws.amazon.com/fsx/latest/LustreGuide/managing-throughput-capacity.html)
    assert _deployment("persistent", "persistent") == (INPLACE, OK)
    assert _impact(_deployment("scratch", "scratch")) == DATA
    # either side scratch: the old one could not take it, or the new one is created anyway
    assert _impact(_deployment("persistent", "scratch")) == DATA
    assert _impact(_deployment("scratch", "persistent")) == DATA


# ---------------------------------------------------------------- Slurm versions


def _slurm(old: Any, new: Any) -> tuple[Impact, str] | None:
    loc = ("scheduler", "version")
    return refine.slurm_version(_edit("scheduler.version", "scheduler.version", loc, old, new))


def test_a_slurm_maintenance_release_restarts_the_daemons_in_turn() -> None:
    # a maintenance release (24.11.x) keeps the RPC and state formats (slurm.schedmd.com/
    # upgrades.html, "Release Cycle")
    assert _impact(_slurm("24.11.1", "24.11.5")) == ROLL
    assert _impact(_slurm("24.11", "24.11.5")) == ROLL


def test_a_slurm_downgrade_is_an_outage() -> None:
    # upgrades.html: downgrades are not supported (state files of a newer release)
    verdict = _slurm("24.11.5", "24.05.8")
    assert _impact(verdict) == OUTAGE
    assert verdict is not None and "downgrade" in verdict[1]


@pytest.mark.parametrize(
    ("old", "new", "apart", "window"),
    [
        # upgrades.html, "Compatibility Window": two releases back before 24.11, three from
        # 24.11 on. Supported releases in order: 22.05 23.02 23.11 24.05 24.11 25.05 25.11 26.05
        ("23.11", "24.05", None, None),  # one step
        ("22.05", "23.11", None, None),  # two steps, window two: allowed
        ("22.05", "24.05", 3, 2),  # three steps, window two: beyond
        ("23.02", "24.11", None, None),  # three steps, window three (24.11 on): allowed
        ("23.02", "25.05", 4, 3),
        ("22.05", "26.05", 7, 3),
    ],
)
def test_a_slurm_major_upgrade_is_an_outage_and_names_a_skipped_window(
    old: str, new: str, apart: int | None, window: int | None
) -> None:
    verdict = _slurm(old, new)
    assert verdict is not None and verdict[0] == OUTAGE
    assert "major upgrade" in verdict[1]
    if apart is None:
        assert "releases apart" not in verdict[1]
    else:
        assert (
            f"({apart} releases apart: Slurm {new} upgrades from at most {window} " in (verdict[1])
        )


def test_a_slurm_version_without_a_table_gets_no_window_count() -> None:
    # 20.11 predates the bundled option tables: a major upgrade, with no step count
    for old, new in [("20.11", "23.11"), ("23.11", "27.05")]:
        verdict = _slurm(old, new)
        assert verdict is not None and verdict[0] == OUTAGE
        assert "releases apart" not in verdict[1]


def test_a_slurm_version_that_does_not_parse_keeps_the_rows_verdict() -> None:
    assert _slurm("latest", "24.11") is None
    assert _slurm("24.11", None) is None


# ---------------------------------------------------------------- regions


def _placement(**fields: Any) -> dict[str, Any]:
    return {"placement": {"provider": "aws", **fields}}


def _region_edit(old_root: dict[str, Any], new_root: dict[str, Any]) -> Edit:
    return _edit(
        "placement.region", "placement.region", ("placement", "region"), 1, 2, old_root, new_root
    )


def test_region_rewritten_as_regions_is_no_move() -> None:
    same = _region_edit(_placement(region="us-east-1"), _placement(regions=["us-east-1"]))
    back = _region_edit(_placement(regions=["us-east-1"]), _placement(region="us-east-1"))
    assert _impact(refine.training_region(same)) == INPLACE
    assert _impact(refine.training_region(back)) == INPLACE


def test_a_training_cluster_that_moves_keeps_the_rows_verdict() -> None:
    moved = _region_edit(_placement(region="us-east-1"), _placement(region="us-west-2"))
    two = _region_edit(
        _placement(region="us-east-1"), _placement(regions=["us-east-1", "eu-west-1"])
    )
    gone = _region_edit(_placement(region="us-east-1"), {"placement": "somewhere"})
    assert refine.training_region(moved) is None
    assert refine.training_region(two) is None
    assert refine.training_region(gone) is None


def test_no_placement_and_no_region_read_alike() -> None:
    # neither side names a region: nothing moved
    assert _impact(refine.training_region(_region_edit({}, _placement()))) == INPLACE
    assert (
        _impact(refine.training_region(_region_edit({"placement": []}, _placement(region=""))))
        == INPLACE
    )


def test_a_fleet_region_removed_takes_its_cluster_down() -> None:
    edit = _region_edit(
        _placement(regions=["us-east-1", "eu-west-1"]), _placement(regions=["us-east-1"])
    )
    verdict = refine.fleet_regions(edit)
    assert verdict is not None and verdict[0] == OUTAGE
    assert "eu-west-1" in verdict[1] and "us-east-1" not in verdict[1]


def test_a_fleet_region_added_joins_in_place() -> None:
    edit = _region_edit(
        _placement(region="us-east-1"), _placement(regions=["us-east-1", "ap-south-1"])
    )
    verdict = refine.fleet_regions(edit)
    assert verdict is not None and verdict[0] == INPLACE
    assert "ap-south-1" in verdict[1] and "us-east-1" not in verdict[1]


def test_a_fleet_region_swapped_is_a_removal() -> None:
    edit = _region_edit(_placement(regions=["us-east-1"]), _placement(regions=["eu-west-1"]))
    verdict = refine.fleet_regions(edit)
    assert verdict is not None and verdict[0] == OUTAGE and "us-east-1" in verdict[1]


def test_fleet_regions_written_differently_are_no_change() -> None:
    edit = _region_edit(_placement(region="us-east-1"), _placement(regions=["us-east-1"]))
    verdict = refine.fleet_regions(edit)
    assert verdict is not None and verdict[0] == INPLACE
    assert "us-east-1" not in verdict[1]


# ---------------------------------------------------------------- fleet GPU type


@pytest.mark.parametrize(
    ("provider", "pool"),
    [
        # the provider's name for a fleet's node pool, in its own docs
        (
            "aws",
            "managed node group",
        ),  # docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html
        ("azure", "agent pool"),  # learn.microsoft.com/azure/aks/create-node-pools
        ("gcp", "node pool"),  # cloud.google.com/kubernetes-engine/docs/concepts/node-pools
        ("nosuchcloud", "node pool"),
    ],
)
def test_a_fleet_gpu_type_change_replaces_the_pool(provider: str, pool: str) -> None:
    root = _placement(regions=["r1"]) | {"placement": {"provider": provider}}
    edit = _edit(
        "gpu_pool.instance_type",
        "gpu_pool.instance_type",
        ("gpu_pool", "instance_type"),
        "g5.12xlarge",
        "p5.48xlarge",
        root,
        root,
    )
    verdict = refine.gpu_instance_type(edit)
    assert verdict is not None and verdict[0] == NODES
    assert f"a new GPU {pool} per region" in verdict[1] and "p5.48xlarge" in verdict[1]


# ---------------------------------------------------------------- Kubernetes version


def _k8s(provider: str, old: str, new: str) -> tuple[Impact, str] | None:
    root = {"placement": {"provider": provider, "regions": ["r1"]}}
    loc = ("kubernetes", "version")
    return refine.kubernetes_version(
        _edit("kubernetes.version", "kubernetes.version", loc, old, new, root, root)
    )


def test_a_kubernetes_downgrade_recreates_the_clusters() -> None:
    # EKS: "you can't downgrade the Kubernetes version" (docs.aws.amazon.com/eks/latest/
    # userguide/update-cluster.html); GKE and AKS likewise refuse control plane downgrades
    assert _impact(_k8s("aws", "1.31", "1.30")) == OUTAGE
    assert _impact(_k8s("gcp", "1.30", "1.29")) == OUTAGE


@pytest.mark.parametrize(
    ("old", "new", "skipped"), [("1.29", "1.31", 1), ("1.28", "1.31", 2), ("1.15", "1.30", 14)]
)
def test_a_kubernetes_upgrade_that_skips_a_minor_is_refused(
    old: str, new: str, skipped: int
) -> None:
    # EKS: "Kubernetes versions ... update one minor version at a time" (update-cluster.html);
    # AKS and GKE upgrade the control plane one minor version at a time too
    verdict = _k8s("aws", old, new)
    assert verdict is not None and verdict[0] == NODES
    assert f"skips {skipped})" in verdict[1] and "refused" in verdict[1]


@pytest.mark.parametrize(("old", "new"), [("1.30", "1.31"), ("1.31", "1.32"), ("1.27", "1.28")])
def test_a_one_minor_kubernetes_upgrade_is_not_refused(old: str, new: str) -> None:
    # one minor at a time is what every provider does (update-cluster.html); 1.31 -> 1.32 and
    # 1.27 -> 1.28 are one step each however their digits fall
    verdict = _k8s("gcp", old, new)
    assert verdict is not None and verdict[0] == NODES and "refused" not in verdict[1]


def test_a_kubernetes_minor_upgrade_rolls_the_pools_in_the_providers_way() -> None:
    # control plane first, then the node pools (update-cluster.html then
    # update-managed-node-group.html; AKS upgrade-aks-cluster; GKE cluster-upgrades)
    aws = _k8s("aws", "1.30", "1.31")
    azure = _k8s("azure", "1.30", "1.31")
    gcp = _k8s("gcp", "1.30", "1.31")
    generic = _k8s("onprem", "1.30", "1.31")
    assert aws is not None and aws[0] == NODES and "EKS" in aws[1]
    assert azure is not None and azure[0] == NODES and "AKS" in azure[1]
    assert gcp is not None and gcp[0] == NODES and "GKE" in gcp[1]
    assert generic is not None and generic[0] == NODES and "refused" not in generic[1]
    assert "control plane upgraded" in generic[1]


# ---------------------------------------------------------------- API endpoint access


def _api(provider: str, old: list[str], new: list[str]) -> tuple[Impact, str] | None:
    root = {"placement": {"provider": provider, "regions": ["r1"]}}
    loc = ("kubernetes", "api_access_cidrs")
    path = "kubernetes.api_access_cidrs"
    return refine.api_access(_edit(path, path, loc, old, new, root, root))


PRIVATE = ["10.0.0.0/8"]
OTHER_PRIVATE = ["10.0.0.0/8", "192.168.0.0/16"]
MIXED = ["10.0.0.0/8", "8.8.8.0/24"]


@pytest.mark.parametrize("provider", ["aws", "azure", "gcp"])
def test_an_access_list_edit_on_the_same_side_is_in_place(provider: str) -> None:
    # EKS/GKE/AKS update authorised ranges on a running cluster
    assert _api(provider, PRIVATE, OTHER_PRIVATE) == (
        INPLACE,
        "the API endpoint's access list is updated in place",
    )
    assert _impact(_api(provider, ["8.8.8.0/24"], MIXED)) == INPLACE


def test_a_private_public_flip_is_in_place_on_eks_and_gke() -> None:
    # EKS: endpoint access is modified on an existing cluster (eks/latest/userguide/
    # cluster-endpoint.html); GKE: `clusters update --enable-private-endpoint`
    aws = _api("aws", PRIVATE, ["8.8.8.0/24"])
    gcp = _api("gcp", ["8.8.8.0/24"], PRIVATE)
    assert aws is not None and aws[0] == INPLACE and "becomes public" in aws[1]
    assert gcp is not None and gcp[0] == INPLACE and "becomes private" in gcp[1]


def test_a_private_public_flip_recreates_aks_clusters() -> None:
    # a classic private AKS cluster is chosen at creation (learn.microsoft.com/azure/aks/
    # private-clusters)
    verdict = _api("azure", PRIVATE, MIXED)
    assert verdict is not None and verdict[0] == OUTAGE and "becomes public" in verdict[1]
    back = _api("azure", MIXED, PRIVATE)
    assert back is not None and back[0] == OUTAGE and "becomes private" in back[1]


def test_a_flip_on_a_provider_without_words_is_left_to_it() -> None:
    verdict = _api("onprem", PRIVATE, ["8.8.8.0/24"])
    assert verdict is not None and verdict[0] == INPLACE
    assert "the provider updates it in place" in verdict[1]


def test_no_ranges_count_as_private() -> None:
    # an empty list admits no public address: the fleet program opens no public endpoint
    # (KubernetesSettings: "a fleet whose api_access_cidrs are all private")
    assert _impact(_api("azure", [], PRIVATE)) == INPLACE
    assert _impact(_api("azure", [], ["8.8.8.0/24"])) == OUTAGE


@pytest.mark.parametrize(
    "shared",
    [
        # not globally reachable in the IANA IPv4 Special-Purpose Address Registry
        # (iana.org/assignments/iana-ipv4-special-registry): shared address space (RFC 6598),
        # IETF protocol assignments (RFC 6890), documentation (RFC 5737), benchmarking
        # (RFC 2544); Python's ipaddress calls the first two not private
        "100.64.0.0/10",
        "192.0.0.0/24",
        "203.0.113.0/24",
        "198.18.0.0/15",
    ],
)
def test_a_range_no_public_address_reaches_is_private_as_the_program_sees_it(shared: str) -> None:
    # the fleet program opens the public endpoint only for ranges that admit public addresses
    # (render/targets/fleet/view.py, spec.addresses): a range of non-public addresses is no
    # flip, and leaving it for a public one is
    assert _impact(_api("azure", PRIVATE, [shared])) == INPLACE
    assert _impact(_api("azure", [shared], ["8.8.8.0/24"])) == OUTAGE

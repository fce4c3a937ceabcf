"""validate.yml's group variables: the tests each stage runs and their busbw floors.

The floors are data (archform/spec/data/nccl_floors.yaml: a published figure and its source URL
per entry, times a documented fraction); this module only picks the entries that apply to the
cluster's GPU model and fabric. A stage with no published figure still runs its default-algorithm
test, reported without a verdict (floor_gbytes None).
"""

from __future__ import annotations

from typing import Any

from archform.render.targets.common.training_view import TrainingView
from archform.spec.nccl_floors import Floor, fabric_floors, node_floors

# Extra-var defaults of validate.yml (documented in its header).
DEFAULTS: list[tuple[str, Any]] = [
    ("validate_stages", ["health", "node", "pairs", "cluster"]),
    # dcgmi diag level 2 ("Medium (Extended System Validation ~ 2 minutes)" in dcgmi's own
    # help, NVIDIA/DCGM dcgmi/CommandLineParser.cpp): level 1's deployment checks plus the
    # PCIe/NVLink and memory tests; 3 ("Long ... ~ 15 minutes") is the burn-in choice
    # (docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html).
    ("validate_dcgm_level", 2),
    ("validate_launcher", "srun"),
    ("validate_srun_gpus", True),
    ("archform_nccl_tests_bin", "/opt/nccl-tests/build/all_reduce_perf"),
    ("validate_nccl_args", "-b 8 -e 8G -f 2"),
    ("validate_step_minutes", 30),
    ("validate_srun_args", ""),
    ("validate_mpirun_args", ""),
    ("validate_report_dir", ""),
]

UNBOUNDED = {
    "name": "default",
    "algorithm": None,
    "floor_gbytes": None,
    "published_gbytes": None,
    "fraction": None,
    "source": None,
}


def _test(floor: Floor, times: int = 1) -> dict[str, Any]:
    """One test; per-rail figures are multiplied by the rail count (`times`) for the node."""
    return {
        "name": (floor.algorithm or "default").lower(),
        "algorithm": floor.algorithm,
        "floor_gbytes": round(floor.floor_gbytes * times, 1),
        "published_gbytes": round(floor.published_gbytes * times, 2),
        "fraction": floor.fraction,
        "source": floor.source,
    }


def node_tests(view: TrainingView) -> list[dict[str, Any]]:
    """Stage 1 tests: one per published single-node figure of the GPU (NVSwitch boards)."""
    group = view.groups[0]
    if not group.gpus_per_node:
        return []
    floors = node_floors(group.gpu_model) if group.nvswitch else []
    return [_test(f) for f in floors] or [dict(UNBOUNDED)]


def fabric_tests(view: TrainingView, stage: str) -> list[dict[str, Any]]:
    """Stage 2 ("pair") or 3 ("cluster") tests for the cluster's fabric and link rate."""
    group = view.groups[0]
    if not group.gpus_per_node or len(view.all_hostnames) < 2:
        return []
    fabric = view.fabric
    floors = fabric_floors(fabric.kind, fabric.gbps_per_node, fabric.rails, stage)
    return [_test(f, times) for f, times in floors] or [dict(UNBOUNDED)]


def rail_tests(view: TrainingView) -> list[dict[str, Any]]:
    """Stage 2 drill-down of a failing pair: one run per HCA (NCCL_IB_HCA=<hca>, Ring).

    Only where the blueprint names the HCAs and a per-NIC figure exists (InfiniBand, RoCE). One
    NIC carries the whole ring then, so busbw is the per-NIC figure (NCCL maintainers test NICs
    one at a time this way: https://github.com/NVIDIA/nccl/issues/307).
    """
    fabric = view.fabric
    if not fabric.hcas or not fabric_tests(view, "pair"):
        return []
    floors = fabric_floors(fabric.kind, fabric.gbps_per_node, fabric.rails, "pair")
    per_rail = [f for f, times in floors if times > 1 and f.algorithm == "Ring"]
    if not per_rail:
        return []
    return [{**_test(per_rail[0]), "name": f"rail {hca}", "hca": hca} for hca in fabric.hcas]


def group_vars(view: TrainingView) -> list[tuple[str, Any]]:
    """validate.yml's variables for group_vars/all.yml."""
    return [
        *DEFAULTS,
        ("validate_node_tests", node_tests(view)),
        ("validate_pair_tests", fabric_tests(view, "pair")),
        ("validate_rail_tests", rail_tests(view)),
        ("validate_cluster_tests", fabric_tests(view, "cluster")),
    ]

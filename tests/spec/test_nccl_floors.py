"""validate.yml's busbw floors: data with a published source per entry, picked per cluster.

Expected floors are written as the published figure (quoted from the entry's source) times the
data file's documented fraction 0.9, not read back from the code.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

import support
from archform.bundled import templates_dir
from archform.render.targets.ansible import validate_vars
from archform.render.targets.common.training_view import training_view
from archform.spec import load_paths
from archform.spec.models.training import TrainingCluster
from archform.spec.nccl_floors import fabric_floors, floors_data, load_floors, parse_floors


def _view(name: str) -> dict[str, Any]:
    loaded = load_paths([support.BLUEPRINTS / f"{name}.yaml"])
    model = loaded.documents[0].model
    assert isinstance(model, TrainingCluster)
    return training_view(model)


def test_every_floor_entry_has_a_public_source_and_says_how_it_was_measured() -> None:
    data = floors_data()
    entries = [*data["node"], *data["fabric"]]
    assert entries
    for entry in entries:
        assert str(entry["source"]).startswith("https://"), entry
        assert "shared" not in entry["source"]
        assert len(entry["measured"]) > 20, entry
        assert float(entry["published_gbytes"]) > 0, entry
    assert 0 < data["fraction"] <= 1


@pytest.mark.parametrize("field", ["source", "measured", "published_gbytes"])
def test_an_entry_without_a_source_or_figure_is_rejected(field: str) -> None:
    data = floors_data()
    del data["fabric"][0][field]
    with pytest.raises(ValueError, match=r"nccl_floors\.yaml: entry"):
        parse_floors(data)
    data = floors_data()
    data["node"][0]["source"] = "see our notes"
    with pytest.raises(ValueError, match="no public source URL"):
        parse_floors(data)
    assert parse_floors(floors_data()) == load_floors()


def test_ndr_pairs_and_cluster_are_held_to_the_published_per_nic_figure() -> None:
    view = _view("onprem-h100-ib-lustre")  # 8 x NDR 400
    pair = validate_vars.fabric_tests(view, "pair")
    # nccl-tests#290: 46-48 GB/s per NDR NIC with NCCL_ALGO=RING; low end x 8 rails x 0.9.
    assert pair == [
        {
            "name": "ring",
            "algorithm": "Ring",
            "floor_gbytes": round(46 * 8 * 0.9, 1),
            "published_gbytes": 368.0,
            "fraction": 0.9,
            "source": "https://github.com/NVIDIA/nccl-tests/issues/290",
        }
    ]
    assert validate_vars.fabric_tests(view, "cluster") == pair


def test_h100_node_floors_are_nvls_and_ring() -> None:
    tests = validate_vars.node_tests(_view("onprem-h100-ib-lustre"))
    # nccl-tests#212: about 480 GB/s with NVLS, about 370 GB/s ring on one HGX H100.
    assert [(t["algorithm"], t["floor_gbytes"]) for t in tests] == [
        ("NVLS", 480 * 0.9),
        ("Ring", 370 * 0.9),
    ]


def test_efa_p5_pair_floor_is_the_published_two_node_run_and_bounds_pairs_only() -> None:
    view = _view("aws-p5-efa-fsx")
    # awsome-distributed-training nccl-tests README: 2 x p5.48xlarge, 8 GiB: 479.28 GB/s.
    assert [t["floor_gbytes"] for t in validate_vars.fabric_tests(view, "pair")] == [
        round(479.28 * 0.9, 1)
    ]
    assert [t["floor_gbytes"] for t in validate_vars.fabric_tests(view, "cluster")] == [None]


def test_a3_mega_tcpxo_pair_floor_is_the_published_two_node_all_reduce_and_bounds_pairs_only() -> (
    None
):
    view = _view("gcp-a3-mega-tcpxo")  # 16 x a3-megagpu-8g, 8 x 200 Gbps GPU NICs
    # NVIDIA AICR docs/integrator/gke-tcpxo-networking.md (validated on GKE 1.35): 2 x
    # a3-megagpu-8g, all_reduce, about 340 GB/s busbw at 16 GB; NCCL's default algorithm.
    assert validate_vars.fabric_tests(view, "pair") == [
        {
            "name": "default",
            "algorithm": None,
            "floor_gbytes": round(340 * 0.9, 1),
            "published_gbytes": 340.0,
            "fraction": 0.9,
            "source": "https://github.com/NVIDIA/aicr/blob/bc05c6be7859cee7ce6680b93333ed03ba795f88"
            "/docs/integrator/gke-tcpxo-networking.md",
        }
    ]
    # A 2-node default-algorithm figure does not bound a 16-node ring.
    assert [t["floor_gbytes"] for t in validate_vars.fabric_tests(view, "cluster")] == [None]
    # The figure is for the whole 1600 Gbps node, not per rail: a TCPX (A3 High) node has none.
    assert fabric_floors("gpudirect_tcpx", 800, 4, "pair") == []


def test_fabrics_without_a_published_figure_run_without_a_verdict() -> None:
    assert validate_vars.node_tests(_view("onprem-cpu-smoke")) == []
    assert validate_vars.fabric_tests(_view("onprem-cpu-smoke"), "pair") == []


def test_per_rail_figures_scale_with_the_rail_count_and_match_the_rail_rate() -> None:
    # 8 x HDR 200: nccl-tests#119, 24 GB/s per 200G NIC.
    [(floor, times)] = fabric_floors("infiniband", 1600, 8, "pair")
    assert (floor.published_gbytes, times) == (24.0, 8)
    assert fabric_floors("infiniband", 1000, 8, "pair") == []  # 125 Gb/s rails: no figure


def _plugin() -> Any:
    path = templates_dir() / "ansible" / "filter_plugins" / "archform_validate.py"
    spec = importlib.util.spec_from_file_location("archform_validate", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ring_of_pairs_rounds_share_no_node() -> None:
    plugin = _plugin()
    for count in range(2, 9):
        nodes = [f"n{i}" for i in range(count)]
        pairs = plugin.ring_pairs(nodes)
        assert len(pairs) == (1 if count == 2 else count)
        for rnd in (0, 1, 2):
            used = [n for p in pairs if p["round"] == rnd for n in p["nodes"]]
            assert len(used) == len(set(used)), (count, rnd)
        assert {n for p in pairs for n in p["nodes"]} == set(nodes)


def test_dcgm_runtime_error_and_missing_json_are_failures() -> None:
    plugin = _plugin()
    # dcgmi/Diag.cpp HelperDisplayFailureMessage: {"DCGM Diagnostic": {"runtime_error": ...}}
    out = plugin.dcgm_result(
        {
            "rc": 226,
            "stdout": '{"DCGM Diagnostic": {"runtime_error": "no GPUs", "version": "4.2.3"}}',
        }
    )
    assert out == {"passed": False, "failures": ["runtime error: no GPUs"]}
    assert plugin.dcgm_result({"rc": 1, "stdout": "Error: unable to connect"})["passed"] is False


def test_two_nodes_with_a_failing_pair_are_both_suspects() -> None:
    plugin = _plugin()
    failing = {"passed": False, "busbw_gbytes": 10.0, "floor_gbytes": 331.2, "error": None}
    hostvars = {
        "a": {
            "validate_reached": True,
            "validate_pair_results": [{"nodes": ["a", "b"], "results": [failing]}],
        },
        "b": {"validate_reached": True},
    }
    report = plugin.validate_report(["a", "b"], hostvars, ["pairs"], 2)
    assert report["suspect_nodes"] == ["a", "b"] and not report["passed"]
    assert "suspect nodes" in plugin.validate_summary(report)


def test_rail_drill_down_uses_the_per_nic_figure_for_each_named_hca() -> None:
    rails = validate_vars.rail_tests(_view("onprem-h100-ib-lustre"))
    assert [r["hca"] for r in rails] == [
        "mlx5_0",
        "mlx5_3",
        "mlx5_4",
        "mlx5_5",
        "mlx5_6",
        "mlx5_9",
        "mlx5_10",
        "mlx5_11",
    ]
    # nccl-tests#290: 46 GB/s per NDR NIC, x 0.9; one NIC alone, Ring.
    assert {(r["algorithm"], r["floor_gbytes"]) for r in rails} == {("Ring", round(46 * 0.9, 1))}
    assert validate_vars.rail_tests(_view("azure-nd-h100-v5")) == []  # HCAs not named
    assert validate_vars.rail_tests(_view("aws-p5-efa-fsx")) == []  # EFA: no per-NIC figure

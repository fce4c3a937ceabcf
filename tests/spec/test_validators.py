"""The blueprint models' cross-field validators, in process, at each boundary.

Each case edits a bundled blueprint and loads it: either it loads, or the first problem
names the field and says what is wrong. The boundaries are the published ones:

- Tensor parallelism stays inside a node and tensor x pipeline degrees must divide the GPUs:
  Megatron-LM's `initialize_model_parallel` asserts the world size is divisible by
  tensor_model_parallel_size x pipeline_model_parallel_size
  (https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/parallel_state.py).
- Slurm from 24.11 refuses node records past MAX_SLURM_NODES = 65536 (slurm/slurm.h,
  src/common/node_conf.c https://github.com/SchedMD/slurm/blob/master/src/common/node_conf.c).
- A QOS named `normal` exists in every Slurm accounting database
  (https://slurm.schedmd.com/qos.html: "the default QOS named normal").
- Accounts and QOS live in slurmdbd (https://slurm.schedmd.com/accounting.html).
- An LNet NID is `address@network` (https://wiki.lustre.org/LNet_Router_Config_Guide);
  the network of `o2ib(ib0)` is `o2ib0` (network number 0 when none is given).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from archform.spec import load_text
from archform.spec.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
Edit = Callable[[dict[str, Any]], None]


def _base(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "blueprints" / name).read_text("utf-8"))
    return data


TRAINING = _base("onprem-h100-ib-lustre.yaml")  # 32 nodes x 8 H100, Slurm 23.11
AWS = _base("aws-p5-efa-fsx.yaml")
FLEET = _base("inference-h100-single-region.yaml")


def _load(base: dict[str, Any], edit: Edit) -> str | None:
    """None when the edited blueprint loads, else the first problem's message."""
    data = copy.deepcopy(base)
    edit(data)
    try:
        load_text(yaml.safe_dump(data, sort_keys=False), "edited.yaml")
    except SpecError as exc:
        return exc.problems[0].message
    return None


def _set(path: str, value: Any) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is _DROP:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return edit


_DROP = object()


def _all(*edits: Edit) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        for one in edits:
            one(data)

    return edit


def test_the_unedited_blueprints_load() -> None:
    for base in (TRAINING, AWS, FLEET):
        assert _load(base, lambda d: None) is None


# --- TrainingPlacement / FleetPlacement: one region field ----------------------------------


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (_set("placement.region", _DROP), "give `region` (or `regions`)"),
        (_set("placement.regions", ["dc-east"]), "exactly one of `region` or `regions`"),
        (_all(_set("placement.region", _DROP), _set("placement.regions", [])), "must not be"),
        (_all(_set("placement.region", _DROP), _set("placement.regions", ["dc-east"])), None),
    ],
)
def test_training_placement_names_one_region_field(edit: Edit, fragment: str | None) -> None:
    got = _load(TRAINING, edit)
    assert got is None if fragment is None else fragment in (got or ""), got


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (_set("placement.regions", _DROP), "give `regions` (or `region`)"),
        (_set("placement.region", "eu-north-1"), "exactly one of `regions` or `region`"),
        (_set("placement.regions", []), "must not be empty"),
        (_set("placement.regions", ["eu-north-1", "eu-north-1"]), "lists a region twice"),
        (_all(_set("placement.regions", _DROP), _set("placement.region", "eu-north-1")), None),
    ],
)
def test_fleet_placement_names_one_region_field(edit: Edit, fragment: str | None) -> None:
    got = _load(FLEET, edit)
    assert got is None if fragment is None else fragment in (got or ""), got


# --- Storage -----------------------------------------------------------------------------


def _storage(index: int, **fields: Any) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        entry = data["storage"][index]
        for key, value in fields.items():
            if value is _DROP:
                entry.pop(key, None)
            else:
                entry[key] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (_storage(0, capacity_tib=_DROP), "needs capacity_tib"),
        (_storage(2, filestore_tier="BASIC_SSD"), None),  # home is nfs
        (_storage(0, filestore_tier="BASIC_SSD"), "only nfs storage is a Filestore"),
        (_storage(2, lnet="tcp0(eth0)"), "only Lustre has an LNet network"),
        # datasets' server is 10.10.0.10@o2ib
        (_storage(0, lnet="o2ib(ib0)"), None),
        (_storage(0, lnet="tcp(eth0)"), "the server's NID is on LNet network 'o2ib0'"),
        (_storage(0, lnet="tcp(eth0)", endpoint="lustre01:/pretrain"), None),
    ],
)
def test_storage_fields_fit_the_kind(edit: Edit, fragment: str | None) -> None:
    got = _load(TRAINING, edit)
    assert got is None if fragment is None else fragment in (got or ""), got


def test_object_storage_has_no_size_and_no_mount() -> None:
    bucket = {"name": "raw", "kind": "object", "purpose": "training_data"}
    add = _set("storage", [*AWS["storage"], bucket])
    assert _load(AWS, add) is None
    mounted = _set("storage", [*AWS["storage"], {**bucket, "mount": "/raw"}])
    assert "does not mount object storage" in (_load(AWS, mounted) or "")


# --- Scheduler ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (_set("scheduler.version", "20.11"), "Slurm 20.11 is not supported"),
        (_set("scheduler.version", "24.11"), None),
        (_set("scheduler.accounting", False), "accounts need Slurm accounting"),
        (_all(_set("scheduler.accounting", False), _set("scheduler.accounts", [])), None),
        (_set("scheduler.accounts.1.qos", ["high"]), None),
        (_set("scheduler.accounts.1.qos", ["urgent"]), "names QOS 'urgent'"),
        # `normal` needs no qos: entry; the QOS listed under qos: are known too
        (_all(_set("scheduler.qos", []), _set("scheduler.accounts.0.qos", ["normal"])), None),
        (_set("scheduler.partitions", []), "needs at least one partition"),
    ],
)
def test_scheduler_checks(edit: Edit, fragment: str | None) -> None:
    got = _load(TRAINING, edit)
    assert got is None if fragment is None else fragment in (got or ""), got


# --- TrainingCluster ----------------------------------------------------------------------


def _parallel(tp: int, pp: int) -> Edit:
    return _all(_set("training.tensor_parallel", tp), _set("training.pipeline_parallel", pp))


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (_parallel(8, 1), None),  # 8 GPUs per node: TP 8 is the whole node
        (_parallel(16, 1), "tensor_parallel 16 is more than the 8 GPUs"),
        (_parallel(8, 32), None),  # 8 x 32 = 256 = 32 nodes x 8
        (_parallel(8, 3), "= 24 does not divide the cluster's 256 GPUs"),
        (_parallel(4, 64), None),
        (_parallel(1, 1), None),
        (_all(_parallel(8, 5), _set("compute.nodes", 5)), None),  # 40 GPUs
        (_all(_parallel(8, 5), _set("compute.nodes", 6)), "does not divide the cluster's 48"),
        # one GPU per node: no tensor parallelism across the network
        (_all(_set("compute.gpu.per_node", 1), _parallel(2, 1)), "more than the 1 GPUs"),
        (_all(_set("compute.gpu.per_node", 1), _parallel(1, 32)), None),
    ],
)
def test_parallelism_fits_the_gpus(edit: Edit, fragment: str | None) -> None:
    got = _load(TRAINING, edit)
    assert got is None if fragment is None else fragment in (got or ""), got


def test_parallelism_is_not_checked_without_gpus() -> None:
    smoke = _base("onprem-cpu-smoke.yaml")
    edit = _set("training", {"framework": "pytorch_ddp", "tensor_parallel": 2})
    assert _load(smoke, edit) is None


@pytest.mark.parametrize(
    ("version", "nodes", "fragment"),
    [
        ("24.11", 65536, None),
        ("24.11", 65537, "65537 nodes exceed the 65536 that Slurm 24.11 accepts"),
        ("24.05", 65537, None),  # before 24.11: only memory limits the node count
    ],
)
def test_node_count_within_slurms_limit(version: str, nodes: int, fragment: str | None) -> None:
    edit = _all(
        _set("scheduler.version", version),
        _set("compute.nodes", nodes),
        _set("training", _DROP),
    )
    got = _load(AWS, edit)
    assert got is None if fragment is None else fragment in (got or ""), got


def test_lnet_only_on_prem_and_once_per_network() -> None:
    same = _all(_storage(0, lnet="o2ib(ib0)"), _storage(1, lnet="o2ib(ib0)"))
    assert _load(TRAINING, same) is None
    other = _all(_storage(0, lnet="o2ib(ib0)"), _storage(1, lnet="o2ib(ib1)"))
    assert "with other interfaces than 'o2ib(ib0)'" in (_load(TRAINING, other) or "")
    two_nets = _all(
        _storage(0, lnet="o2ib(ib0)"),
        _storage(1, lnet="o2ib1(ib1)", endpoint="10.10.0.11@o2ib1:/ckpt"),
    )
    assert _load(TRAINING, two_nets) is None
    lustre = [s for s in AWS["storage"] if s["kind"] == "lustre"]
    assert lustre, "the AWS blueprint has an FSx for Lustre entry"
    index = AWS["storage"].index(lustre[0])
    cloud = _storage(index, lnet="tcp(eth0)")
    assert "lnet is for on-prem Lustre" in (_load(AWS, cloud) or "")


# --- InferenceFleet -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "fragment"),
    [
        (2, 8, None),
        (8, 8, None),
        (9, 8, "min_nodes_per_region (9) exceeds max_nodes_per_region (8)"),
        (0, 1, None),
    ],
)
def test_gpu_pool_bounds(low: int, high: int, fragment: str | None) -> None:
    edit = _all(
        _set("gpu_pool.min_nodes_per_region", low), _set("gpu_pool.max_nodes_per_region", high)
    )
    got = _load(FLEET, edit)
    assert got is None if fragment is None else fragment in (got or ""), got


def test_a_named_base_model_fills_the_shape() -> None:
    # Llama 3.1 70B: 80 layers, 8 KV heads of 128 (config.json,
    # https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json), 70.6B params
    data = copy.deepcopy(FLEET)
    for key in ("params", "layers", "kv_heads", "head_dim"):
        data["model"].pop(key)
    data["model"]["base"] = "llama-3.1-70b"
    (doc,) = load_text(yaml.safe_dump(data, sort_keys=False), "named.yaml").documents
    model = doc.model.model  # type: ignore[union-attr]
    assert (model.layers, model.kv_heads, model.head_dim) == (80, 8, 128)
    assert model.params == 70.6e9


def test_a_server_without_a_default_image_needs_one() -> None:
    # NIM images are per model (https://docs.nvidia.com/nim/large-language-models/latest/)
    nim = _all(_set("server.kind", "nim"), _set("server.image", _DROP))
    assert "server kind nim has no default image" in (_load(FLEET, nim) or "")
    named = _all(_set("server.kind", "nim"), _set("server.image", "nvcr.io/nim/meta/x:1.0"))
    assert "no default image" not in (_load(FLEET, named) or "")


def test_object_storage_is_no_filestore() -> None:
    bucket = {"name": "raw", "kind": "object", "purpose": "training_data"}
    tiered = _set("storage", [*AWS["storage"], {**bucket, "filestore_tier": "BASIC_SSD"}])
    assert "only nfs storage is a Filestore" in (_load(AWS, tiered) or "")


def test_a_cluster_naming_no_image_gets_one_and_a_named_one_is_kept() -> None:
    images = yaml.safe_load((ROOT / "src/archform/spec/data/images.yaml").read_text("utf-8"))
    ids = set(images["images"])
    assert "image" not in TRAINING["compute"]
    (doc,) = load_text(yaml.safe_dump(TRAINING, sort_keys=False), "t.yaml").documents
    chosen = doc.model.compute.image  # type: ignore[union-attr]
    assert chosen is not None and chosen in ids, chosen
    smoke = _base("onprem-cpu-smoke.yaml")
    (kept,) = load_text(yaml.safe_dump(smoke, sort_keys=False), "s.yaml").documents
    assert kept.model.compute.image == "debian-12"  # type: ignore[union-attr]


def test_a_named_training_model_fills_the_shape() -> None:
    # Llama 3.1 70B: 80 layers, hidden size 8192 (config.json,
    # https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json), 70.6B params
    data = copy.deepcopy(TRAINING)
    data["training"].pop("model_params")
    data["training"]["model"] = "llama-3.1-70b"
    (doc,) = load_text(yaml.safe_dump(data, sort_keys=False), "named.yaml").documents
    work = doc.model.training  # type: ignore[union-attr]
    assert (work.model_params, work.layers, work.hidden_size) == (70.6e9, 80, 8192)


def test_kubernetes_needs_no_slurm_partition() -> None:
    edit = _all(
        _set("scheduler", {"kind": "kubernetes", "partitions": []}),
        _storage(0, lnet=_DROP),
    )
    assert "needs at least one partition" not in (_load(TRAINING, edit) or "")

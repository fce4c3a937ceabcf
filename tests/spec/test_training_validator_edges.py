"""TrainingCluster validators at the edges tests/spec/test_validators.py leaves open.

Each case edits a bundled blueprint and loads it in process: it loads, or the first problem
says what is wrong. What must hold comes from the validators' own contracts and the sources
they cite:

- every file system but object storage has a size; object storage is never mounted
  (Storage._sized: no gcsfuse, mountpoint-s3 or blobfuse2 is installed);
- only Lustre has an LNet network, and a NID is `address@network`
  (https://wiki.lustre.org/LNet_Router_Config_Guide; `tcp` is network `tcp0`);
- Slurm's `Default=YES` marks the one partition jobs without `-p` go to; a partition list
  without one is valid slurm.conf (https://slurm.schedmd.com/slurm.conf.html, "Default");
- Megatron-LM builds its groups from a world size divisible by
  tensor x pipeline x context parallel sizes
  (https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/parallel_state.py,
  initialize_model_parallel);
- the Slurm release checks (supported version, MAX_SLURM_NODES) apply to Slurm only.
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


ONPREM = _base("onprem-h100-ib-lustre.yaml")  # 32 nodes x 8 H100 = 256 GPUs, Lustre over o2ib
AWS = _base("aws-p5-efa-fsx.yaml")  # 16 x p5.48xlarge, FSx for Lustre, Slurm 24.05


def _load(base: dict[str, Any], *edits: Edit) -> str | None:
    """None when the edited blueprint loads, else the first problem's message."""
    data = copy.deepcopy(base)
    for edit in edits:
        edit(data)
    try:
        load_text(yaml.safe_dump(data, sort_keys=False), "edited.yaml")
    except SpecError as exc:
        return exc.problems[0].message
    return None


def _storage(index: int, **fields: Any) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        entry = data["storage"][index]
        for key, value in fields.items():
            if value is None:
                entry.pop(key, None)
            else:
                entry[key] = value

    return edit


def _set(section: str, **fields: Any) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        node = data.setdefault(section, {})
        for key, value in fields.items():
            if value is None:
                node.pop(key, None)
            else:
                node[key] = value

    return edit


# `home` (index 2 of ONPREM) is an NFS share with a size and a mount: it becomes each kind
HOME = 2


def test_the_unedited_blueprints_load() -> None:
    assert _load(ONPREM) is None
    assert _load(AWS) is None


@pytest.mark.parametrize("kind", ["weka", "gpfs", "lustre", "nfs"])
def test_every_file_system_but_object_storage_needs_a_size(kind: str) -> None:
    got = _load(ONPREM, _storage(HOME, kind=kind, capacity_tib=None, endpoint=None))
    assert f"storage 'home' of kind {kind} needs capacity_tib" in (got or ""), got


@pytest.mark.parametrize("kind", ["weka", "gpfs", "nfs"])
def test_a_mounted_file_system_of_another_kind_is_no_object_store(kind: str) -> None:
    assert _load(ONPREM, _storage(HOME, kind=kind, endpoint=None)) is None


def test_object_storage_is_not_mounted() -> None:
    edit = _storage(HOME, kind="object", capacity_tib=None, endpoint=None, source="s3://b/")
    assert "archform does not mount object storage" in (_load(ONPREM, edit) or "")


@pytest.mark.parametrize("kind", ["gpfs", "local_nvme", "nfs", "weka"])
def test_only_lustre_has_an_lnet_network(kind: str) -> None:
    got = _load(ONPREM, _storage(HOME, kind=kind, lnet="o2ib(ib0)", endpoint=None))
    assert f"storage 'home' is {kind}: only Lustre has an LNet network" in (got or ""), got


@pytest.mark.parametrize(
    ("endpoint", "lnet", "served"),
    [
        ("10.10.0.10@tcp:/pretrain", "o2ib(ib0)", "tcp0"),  # NID on tcp, lnet says o2ib
        ("10.10.0.10@o2ib:/pretrain", "tcp(bond0)", "o2ib0"),
        ("10.10.0.10@o2ib1:/pretrain", "o2ib(ib0)", "o2ib1"),
    ],
)
def test_lnet_must_name_the_network_the_servers_nid_is_on(
    endpoint: str, lnet: str, served: str
) -> None:
    got = _load(ONPREM, _storage(0, endpoint=endpoint, lnet=lnet), _storage(1, lnet=lnet))
    assert f"the server's NID is on LNet network {served!r}" in (got or ""), got


@pytest.mark.parametrize(("first", "second"), [("o2ib(ib1)", "o2ib(ib0)"), ("tcp(eth1)", "tcp")])
def test_one_lnet_entry_per_network_whatever_the_order(first: str, second: str) -> None:
    # lnet `networks=` takes one entry per network: two spellings of o2ib0 (or tcp0) conflict
    endpoint = "10.10.0.10@tcp:/x" if first.startswith("tcp") else None
    edits = [_storage(0, lnet=first), _storage(1, lnet=second)]
    if endpoint:
        edits += [_storage(0, endpoint=endpoint), _storage(1, endpoint=endpoint)]
    got = _load(ONPREM, *edits)
    assert f"with other interfaces than {first!r}" in (got or ""), got


def test_lnet_on_a_cloud_names_the_first_file_system_given() -> None:
    got = _load(AWS, _storage(0, lnet="tcp"), _storage(1, lnet="tcp"))
    assert got is not None and got.startswith(
        "storage: storage 'datasets': lnet is for on-prem Lustre"
    )


def test_partitions_without_a_default_are_valid_slurm() -> None:
    edit = _set("scheduler", partitions=[{"name": "train"}, {"name": "debug"}])
    assert _load(ONPREM, edit) is None


def test_two_default_partitions_are_refused() -> None:
    parts = [{"name": "train", "default": True}, {"name": "debug", "default": True}]
    got = _load(ONPREM, _set("scheduler", partitions=parts))
    assert "only one partition may be default, got train, debug" in (got or ""), got


def test_kubernetes_clusters_skip_the_slurm_release_checks() -> None:
    # neither the supported-release list nor the 24.11 node cap applies without Slurm
    old = _set("scheduler", version="20.11")
    k8s = _set("scheduler", kind="kubernetes", partitions=[])
    assert "Slurm 20.11 is not supported" in (_load(AWS, old) or "")
    assert _load(AWS, old, k8s) is None
    many = [_set("scheduler", version="24.11"), _set("compute", nodes=65537)]
    many.append(_set("training", framework=None))
    assert "65537 nodes exceed the 65536" in (_load(AWS, *many) or "")
    assert _load(AWS, *many, k8s) is None


@pytest.mark.parametrize(
    ("tp", "pp", "cp", "message"),
    [
        # 256 GPUs: 8 x 3 x 2 = 48 does not divide them; 8 x 3 = 24 does not either
        (8, 3, 2, "tensor_parallel x pipeline_parallel x context_parallel = 48 does not divide"),
        (8, 3, 1, "tensor_parallel x pipeline_parallel = 24 does not divide"),
        (4, 3, 4, "tensor_parallel x pipeline_parallel x context_parallel = 48 does not divide"),
        (8, 2, 2, None),  # 32 divides 256
        (8, 1, 32, None),  # 256 divides 256
    ],
)
def test_context_parallel_multiplies_the_model_parallel_group(
    tp: int, pp: int, cp: int, message: str | None
) -> None:
    edit = _set("training", tensor_parallel=tp, pipeline_parallel=pp, context_parallel=cp)
    got = _load(ONPREM, edit)
    assert got is None if message is None else message in (got or ""), got

"""gres.conf Cores=: GPU-local cores from the catalog, in Slurm's logical core numbering.

Expected values are read from the vendors' NCCL topology files, not from archform's code:
- Azure ND H100 v5, https://github.com/Azure/azhpc-images/blob/992d77594014206e2d973938a97b30dd93839871/topology/ndv5-topo.xml
  (the file as corrected on 2025-01-27; before, the two masks were swapped):
  <cpu affinity="00000000,0000ffff,ffffffff"> (CPUs 0-47) holds the GPUs at PCI domains
  0001, 0002, 0003, 0008; affinity "ffffffff,ffff0000,00000000" (CPUs 48-95) holds 0009-000c.
- Azure ND A100 v4, .../blob/4a4565a0c0aa9d6944c53420155936061b9c3a98/topology/ndv4-topo.xml
  (fixed 2025-01-29): CPUs 0-23 hold 0003, 0004; 24-47 hold 0001, 0002; 48-71 hold 000d,
  000e; 72-95 hold 000b, 000c.
- AWS p4d.24xlarge, https://github.com/aws/aws-ofi-nccl/blob/0bac2382c9604cc7099df85c1862efeecb320813/topology/p4d-24xl-topo.xml:
  GPUs 0-3 under affinity "000000ff,ffff0000,00ffffff" (CPUs 0-23,48-71), GPUs 4-7 under
  "ffffff00,0000ffff,ff000000" (24-47,72-95); 2 x 24 cores x 2 threads.
Slurm's Cores= are logical core indices (gres.conf(5): core 0 is the first core of the first
socket), so the SMT siblings 48-71 of cores 0-23 are no extra cores.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import support
from archform.render.targets.ansible import slurm_conf, target
from archform.spec import load_paths
from archform.spec.catalog import load_catalog
from archform.spec.models.training import TrainingCluster
from archform.verify.checks.slurm_gres import affinity_problems


def _cluster(stem: str) -> TrainingCluster:
    [doc] = load_paths([support.BLUEPRINTS / f"{stem}.yaml"]).documents
    assert isinstance(doc.model, TrainingCluster)
    return doc.model


def _on(stem: str, instance_type: str, **scheduler: Any) -> TrainingCluster:
    """The bundled cluster moved onto another instance type, CPU and GPUs from the catalog."""
    info = load_catalog().instance(instance_type)
    assert info is not None and info.gpu_model
    data = _cluster(stem).model_dump(mode="json", exclude_none=True)
    data["compute"] = {
        **data["compute"],
        "instance_type": instance_type,
        "gpu": {"model": info.gpu_model, "per_node": info.gpu_count},
        "cpu": {
            "sockets": info.sockets,
            "cores_per_socket": info.cores_per_socket,
            "threads_per_core": info.threads_per_core,
        },
    }
    data["scheduler"] = {**data["scheduler"], **scheduler}
    return TrainingCluster.model_validate(data)


def _files(cluster: TrainingCluster) -> tuple[str, str]:
    files = support.tree_bytes(target.render_cluster(cluster))
    base = "ansible/roles/slurm/files/"
    return files[base + "slurm.conf"].decode(), files[base + "gres.conf"].decode()


def _gpu_lines(gres: str) -> list[str]:
    return [line.split(" Name=gpu ", 1)[1] for line in gres.splitlines() if " Name=gpu " in line]


def test_nd_h100_v5_gpus_split_by_socket() -> None:
    slurm, gres = _files(_cluster("azure-nd-h100-v5"))
    assert _gpu_lines(gres) == [
        "Type=h100 File=/dev/nvidia[0-3] Cores=0-47",
        "Type=h100 File=/dev/nvidia[4-7] Cores=48-95",
    ]
    assert "Sockets=2 CoresPerSocket=48 ThreadsPerCore=1" in slurm
    assert "ndv5-topo.xml" in gres


def test_p4d_cores_count_smt_siblings_once() -> None:
    slurm, gres = _files(_on("aws-p5-efa-fsx", "p4d.24xlarge"))
    assert "Sockets=2 CoresPerSocket=24 ThreadsPerCore=2" in slurm
    assert _gpu_lines(gres) == [
        "Type=a100_40gb File=/dev/nvidia[0-3] Cores=0-23",
        "Type=a100_40gb File=/dev/nvidia[4-7] Cores=24-47",
    ]


def test_nd_a100_v4_has_four_numa_domains_of_two_gpus() -> None:
    _, gres = _files(_on("azure-nd-h100-v5", "Standard_ND96asr_v4"))
    assert _gpu_lines(gres) == [
        "Type=a100_40gb File=/dev/nvidia[0-1] Cores=24-47",
        "Type=a100_40gb File=/dev/nvidia[2-3] Cores=0-23",
        "Type=a100_40gb File=/dev/nvidia[4-5] Cores=72-95",
        "Type=a100_40gb File=/dev/nvidia[6-7] Cores=48-71",
    ]


def test_unknown_affinity_gives_no_cores_and_says_why() -> None:
    """p5: aws-ofi-nccl's p5 file put all 8 GPUs under one 48-CPU mask (removed 2025-06)."""
    _, gres = _files(_cluster("aws-p5-efa-fsx"))
    assert _gpu_lines(gres) == ["Type=h100 File=/dev/nvidia[0-7]"]
    assert "no vendor source for the GPU-CPU affinity of p5.48xlarge" in gres
    assert "gres_autodetect: nvml" in gres
    _, onprem = _files(_cluster("onprem-h100-ib-lustre"))
    assert _gpu_lines(onprem) == ["Type=h100 File=/dev/nvidia[0-7]"]
    assert "of these nodes" in onprem


def test_a_cpu_layout_that_does_not_fit_the_catalog_gets_no_cores() -> None:
    """compute.cpu of a p5 (2 x 48 x 2) on p4d GPUs: the p4d CPU lists name half cores."""
    data = _on("aws-p5-efa-fsx", "p4d.24xlarge").model_dump(mode="json", exclude_none=True)
    data["compute"]["cpu"] = {"sockets": 2, "cores_per_socket": 48, "threads_per_core": 2}
    _, gres = _files(TrainingCluster.model_validate(data))
    assert _gpu_lines(gres) == ["Type=a100_40gb File=/dev/nvidia[0-7]"]
    assert "affinity of p4d.24xlarge does not fit the CPU layout" in gres


def test_elastic_nodes_are_not_told_to_autodetect() -> None:
    """SCH002: AutoDetect cannot serve CLOUD nodes, so the comment does not suggest it."""
    _, gres = _files(_on("aws-p5-efa-fsx", "p5.48xlarge", elastic=True))
    assert "no vendor source" in gres and "gres_autodetect" not in gres


def test_autodetect_lets_nvml_report_files_and_cores() -> None:
    _, gres = _files(_on("azure-nd-h100-v5", "Standard_ND96isr_H100_v5", gres_autodetect="nvml"))
    assert _gpu_lines(gres) == ["Type=h100 Count=8"]
    assert "Cores=" not in gres and "AutoDetect=nvml" in gres  # NVML reports the affinity


def _group(cpus: list[str], sockets: int, cores: int, threads: int, gpus: int = 0) -> Any:
    # gpu_cores reads only these fields of a GroupView
    return SimpleNamespace(
        gpu_cpus=cpus,
        gpus_per_node=gpus or len(cpus),
        sockets=sockets,
        cores_per_socket=cores,
        threads_per_core=threads,
    )


@pytest.mark.parametrize(
    ("cpus", "layout"),
    [
        (["0-23,48-71", "24-47,72-95"], (2, 48, 2)),  # p4d lists on a p5-sized node: half a core
        (["0-23", "24-47"], (2, 24, 2)),  # SMT node, list without the siblings
        (["48-96"], (2, 48, 1)),  # a CPU beyond the node
        (["0-47"], (2, 48, 1)),  # one list for a node with more GPUs than lists
    ],
)
def test_lists_that_do_not_fit_the_node_give_no_cores(
    cpus: list[str], layout: tuple[int, int, int]
) -> None:
    group = _group(cpus, *layout, gpus=8 if cpus == ["0-47"] else 0)
    assert slurm_conf.gpu_cores(group) is None


AFFINE = sorted(
    name for name, info in load_catalog().instances.items() if info.gpu_cpus and info.gpu_model
)


def test_the_catalog_states_affinity_for_the_vendor_files_read() -> None:
    assert {
        "p4d.24xlarge",
        "p4de.24xlarge",
        "Standard_ND96isr_H100_v5",
        "Standard_ND96isr_H200_v5",
        "Standard_ND96asr_v4",
        "Standard_ND96amsr_A100_v4",
    } <= set(AFFINE)
    for name in AFFINE:
        info = load_catalog().instance(name)
        assert info is not None and info.gpu_cpus_source
        assert info.gpu_cpus_source.startswith("https://github.com/"), name


@pytest.mark.parametrize("name", AFFINE)
def test_every_catalog_affinity_renders_within_the_node(name: str) -> None:
    """Every type with affinity data gets Cores= on every GPU, inside the node, no overlap."""
    info = load_catalog().instance(name)
    assert info is not None
    stem = {"aws": "aws-p5-efa-fsx", "azure": "azure-nd-h100-v5"}[info.provider]
    slurm, gres = _files(_on(stem, name))
    lines = _gpu_lines(gres)
    assert lines and all(" Cores=" in line for line in lines), gres
    assert affinity_problems(slurm, gres) == []
    total = info.sockets * info.cores_per_socket
    used = {c for line in lines for c in _ints(line.split("Cores=")[1])}
    assert max(used) < total and len(used) == total  # every core is some GPU's local core


def _ints(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def test_affinity_problems_catch_cores_beyond_the_node_and_overlaps() -> None:
    slurm = "NodeName=n[1-2] Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 Gres=gpu:h100:4\n"
    ok = (
        "NodeName=n[1-2] Name=gpu Type=h100 File=/dev/nvidia[0-1] Cores=0-3\n"
        "NodeName=n[1-2] Name=gpu Type=h100 File=/dev/nvidia[2-3] Cores=4-7\n"
    )
    assert affinity_problems(slurm, ok) == []
    beyond = ok.replace("Cores=4-7", "Cores=4-8")
    assert any("beyond the node's 8 cores" in p for p in affinity_problems(slurm, beyond))
    overlap = ok.replace("Cores=4-7", "Cores=3-7")
    assert any("partly overlap ([3])" in p for p in affinity_problems(slurm, overlap))
    twice = ok.replace("nvidia[2-3]", "nvidia[1-2]")
    assert any(
        "/dev/nvidia1 listed on more than one line" in p for p in affinity_problems(slurm, twice)
    )

"""The slurmctld sandbox rewrite (no daemon needed)."""

from __future__ import annotations

from pathlib import Path

from archform.render.hostlist import expand
from archform.verify.checks.slurm_sandbox import (
    gres_mismatches,
    loopback_addresses,
    rewrite_slurm_conf,
)


def test_loopback_addresses_cover_exactly_the_nodes() -> None:
    addrs = loopback_addresses(8192, 0)
    expanded = expand(addrs)
    assert len(expanded) == 8192 == len(set(expanded))
    assert expanded[0] == "127.1.0.1" and all(a.startswith("127.") for a in expanded)
    assert expand(loopback_addresses(3, 249)) == ["127.1.0.250", "127.1.1.1", "127.1.1.2"]


def test_rewrite_points_everything_into_the_sandbox(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "SlurmctldHost=ctl",
            "SlurmctldHost=ctl2",
            "SlurmUser=slurm",
            "AuthType=auth/munge",
            "AccountingStorageType=accounting_storage/slurmdbd",
            "AccountingStorageTRES=gres/gpu",
            "StateSaveLocation=/var/spool/slurmctld",
            "NodeName=n[001-300] Sockets=2 RealMemory=1000 State=UNKNOWN",
            "PartitionName=p Nodes=n[001-300]",
        ]
    )
    conf, nodes = rewrite_slurm_conf(text, tmp_path, "thishost")
    lines = conf.splitlines()
    assert nodes == 300
    assert lines[0] == "SlurmctldHost=thishost" and "SlurmctldHost=ctl" not in lines
    assert "AuthType=auth/none" in lines and "CredType=cred/none" in lines
    assert "AccountingStorageType=accounting_storage/none" in lines
    assert not any(line.startswith("AccountingStorageTRES") for line in lines)
    assert f"StateSaveLocation={tmp_path / 'state'}" in lines
    node = next(line for line in lines if line.startswith("NodeName"))
    assert "NodeAddr=127.1.0.[1-250],127.1.1.[1-50]" in node
    assert "PartitionName=p Nodes=n[001-300]" in lines


def test_gres_mismatches_name_the_nodes() -> None:
    slurm = "NodeName=g[1-2] Gres=gpu:h100:8 State=UNKNOWN\nNodeName=c1 State=UNKNOWN\n"
    good = "NodeName=g[1-2] Name=gpu Type=h100 File=/dev/nvidia[0-7]\n"
    assert gres_mismatches(slurm, good) == []
    bad = gres_mismatches(slurm, "NodeName=g1 Name=gpu Type=a100 File=/dev/nvidia[0-7]\n")
    assert bad == [
        "g1: slurm.conf gpu:h100:8, gres.conf gpu:a100:8",
        "g2: slurm.conf gpu:h100:8, gres.conf nothing",
    ]
    short = gres_mismatches(slurm, "NodeName=g[1-2] Name=gpu Type=h100 File=/dev/nvidia[0-3]\n")
    assert len(short) == 2 and "gpu:h100:4" in short[0]


def test_gres_lines_of_one_node_add_up() -> None:
    """A node's GPUs on several lines (one per NUMA domain) are summed (issue 24 mutant)."""
    slurm = "NodeName=g[1-2] Gres=gpu:h100:8 State=UNKNOWN\n"
    split = (
        "NodeName=g[1-2] Name=gpu Type=h100 File=/dev/nvidia[0-3] Cores=0-47\n"
        "NodeName=g[1-2] Name=gpu Type=h100 File=/dev/nvidia[4-7] Cores=48-95\n"
    )
    assert gres_mismatches(slurm, split) == []
    three = split + "NodeName=g2 Name=gpu Type=h100 Count=1 File=/dev/nvidia8\n"
    assert gres_mismatches(slurm, three) == ["g2: slurm.conf gpu:h100:8, gres.conf gpu:h100:9"]
    mixed = split.replace("Type=h100 File=/dev/nvidia[4-7]", "Type=a100 File=/dev/nvidia[4-7]")
    assert gres_mismatches(slurm, mixed) == [
        "g1: slurm.conf gpu:h100:8, gres.conf gpu:mixed:8",
        "g2: slurm.conf gpu:h100:8, gres.conf gpu:mixed:8",
    ]

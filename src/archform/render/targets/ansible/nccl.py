"""NCCL environment per fabric (validate.yml busbw floors: render/targets/ansible/validate_vars).

Sources (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html, NVIDIA/nccl source):
- NCCL_IB_HCA / NCCL_SOCKET_IFNAME: '=' selects exact names (mlx5_1 would also match mlx5_10).
- NCCL_CROSS_NIC=0 only on strictly rail-optimized fabrics; default 2 otherwise.
- RoCE: NCCL_IB_TC = DSCP * 4 (DSCP is the upper six bits of the ToS byte); the GID index is
  auto-selected since NCCL 2.21, so it is only written when the blueprint pins one.
- EFA with aws-ofi-nccl >= 1.7: only FI_EFA_USE_HUGE_PAGE=0; never FI_PROVIDER, NCCL_PROTO,
  FI_EFA_USE_DEVICE_RDMA or RDMAV_* (aws-ofi-nccl doc/efa-env-var.md).
- GCP A3 Mega TCPXO: cluster-toolkit a3-megagpu-8g run-nccl-tests.sh values.
- Azure ND-series: NCCL_TOPO_FILE is the family's `nccl_topo_file` in the catalog (the
  topology file the Azure HPC image ships, Azure/azhpc-images topology/).
"""

from __future__ import annotations

from dataclasses import dataclass

from archform.render.targets.ansible.slurm_conf import ConfValue
from archform.render.targets.common.clouds import cloud
from archform.render.targets.common.training_view import TrainingView
from archform.spec.catalog import load_catalog

TCPXO_PROFILE = "/var/lib/tcpxo/lib64/nccl-env-profile.sh"
TCPXO_LIB_DIR = "/var/lib/tcpxo/lib64"


def topo_file(instance_type: str | None) -> str | None:
    """The NCCL topology file the instance family's image ships (catalog), or None."""
    info = load_catalog().instance(instance_type) if instance_type else None
    return info.nccl_topo_file if info else None


def nccl_conf(view: TrainingView) -> list[tuple[str, ConfValue]]:
    """NCCL_* settings for /etc/nccl.conf (NCCL reads only NCCL_ variables from it)."""
    fabric = view.fabric
    kind = fabric.kind
    out: list[tuple[str, ConfValue]] = []
    if kind in ("infiniband", "roce"):
        if fabric.hcas:
            out.append(("NCCL_IB_HCA", "=" + ",".join(f"{h}:1" for h in fabric.hcas)))
        if fabric.socket_ifname:
            out.append(("NCCL_SOCKET_IFNAME", "=" + fabric.socket_ifname))
        if fabric.topology.kind == "rail_optimized":
            out.append(("NCCL_CROSS_NIC", 0))
        if kind == "roce":
            out.append(("NCCL_IB_TC", fabric.roce.dscp * 4))
            if fabric.roce.gid_index is not None:
                out.append(("NCCL_IB_GID_INDEX", fabric.roce.gid_index))
        if fabric.sharp:
            out.append(("NCCL_COLLNET_ENABLE", 1))
        topo = topo_file(view.groups[0].instance_type)
        if cloud(view.provider).nccl_topo_files and topo:
            out.append(("NCCL_TOPO_FILE", topo))
    elif kind == "efa":
        # 'en' is a prefix on purpose: it matches the ENA interfaces of p4d and p5.
        out.append(("NCCL_SOCKET_IFNAME", fabric.socket_ifname or "en"))
    elif kind == "gpudirect_tcpxo":
        ctrl = fabric.socket_ifname or "enp0s12"
        out += [
            ("NCCL_SOCKET_IFNAME", ctrl),
            ("NCCL_FASTRAK_CTRL_DEV", ctrl),
            (
                "NCCL_FASTRAK_IFNAME",
                "enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0",
            ),
            ("NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", "/dev/aperture_devices"),
        ]
    elif fabric.socket_ifname:
        out.append(("NCCL_SOCKET_IFNAME", "=" + fabric.socket_ifname))
    return out


def profile_exports(view: TrainingView) -> list[tuple[str, ConfValue]]:
    """Non-NCCL variables for /etc/profile.d/nccl.sh (libfabric reads only the environment)."""
    if view.fabric.kind == "efa":
        return [("FI_EFA_USE_HUGE_PAGE", 0)]
    return []


@dataclass(frozen=True, slots=True)
class ProfileSource:
    """A vendor environment script the NCCL profile sources, and its library folder."""

    path: str
    lib_dir: str


def profile_sources(view: TrainingView) -> list[ProfileSource]:
    """Vendor environment scripts the profile sources when present."""
    kind = view.fabric.kind
    if kind == "gpudirect_tcpxo":
        return [ProfileSource(TCPXO_PROFILE, TCPXO_LIB_DIR)]
    plugin = cloud(view.provider).roce_nccl_profile
    if kind == "roce" and plugin is not None:
        return [ProfileSource(*plugin)]
    return []


def container_mounts(view: TrainingView) -> list[str]:
    """Host folders bound read-only into every enroot container (besides /etc/nccl.conf).

    The folder of NCCL_TOPO_FILE, where the provider's images ship one. The fabric's own
    libraries (the TCPXO FasTrak plugin, the EFA stack) are bound by the role's enroot hook
    from spec/data/containers.yaml, only into images that carry none of their own.
    """
    out: list[str] = []
    topo = topo_file(view.groups[0].instance_type)
    if cloud(view.provider).nccl_topo_files and topo:
        out.append(topo.rsplit("/", 1)[0])
    return out

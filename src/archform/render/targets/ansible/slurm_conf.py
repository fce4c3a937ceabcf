"""Slurm configuration (slurm.conf, gres.conf, cgroup.conf, topology.conf) for 22.05 to 25.x.

Everything here returns plain data (lists of ``(key, value)`` lines) that the templates in
``templates/ansible/roles/slurm/files/`` write through the ``conf`` filter. Node lists are
Slurm hostlist ranges, so the files grow with the number of leaf switches, not nodes.

Version facts come from archform.spec.slurm (the option and plugin tables of each
release, read from SchedMD/slurm tags): the flat topology plugin's name (topology/none,
topology/default from 23.11, topology/flat from 25.05), topology/block (23.11 on),
BlockSizes (24.05 on) and gres.conf AutoDetect=nvidia (24.11 on).
"""

from __future__ import annotations

from dataclasses import dataclass

from archform.render.hostlist import compress, int_list, int_ranges
from archform.render.targets.common.training_view import GroupView, TrainingView, leaves
from archform.spec import slurm
from archform.spec.slurm import SlurmVersion

# A value a key=value config file holds (written through the `conf` filter).
ConfValue = str | int | float | bool
Line = list[tuple[str, ConfValue]]

# Paths follow the Debian/Ubuntu slurm-wlm packages (and SchedMD's own packaging).
STATE_DIR = "/var/spool/slurmctld"
SPOOL_DIR = "/var/spool/slurmd"
LOG_DIR = "/var/log/slurm"
CONF_DIR = "/etc/slurm"


def flat_topology_plugin(version: SlurmVersion) -> str:
    """The plugin name meaning 'no topology' for a Slurm version."""
    return slurm.flat_topology_plugin(version)


def topology_kind(view: TrainingView, version: SlurmVersion) -> str:
    """tree, block or flat: what topology.conf (if any) describes for this version."""
    kind = view.fabric.topology.kind
    if kind == "flat" or len(view.all_hostnames) < 2:
        return "flat"
    if kind == "block":
        # topology/block exists from 23.11; before that an NVL domain is a leaf switch.
        return "block" if slurm.feature(version, "topology_block") else "tree"
    return "tree"


def topology_plugin(view: TrainingView, version: SlurmVersion) -> str:
    """TopologyPlugin value."""
    kind = topology_kind(view, version)
    if kind == "flat":
        return flat_topology_plugin(version)
    return f"topology/{kind}"


def _leaf_size(view: TrainingView) -> int:
    topo = view.fabric.topology
    return int(topo.block_size if topo.kind == "block" else topo.nodes_per_leaf)


def leaf_prefix(view: TrainingView) -> str:
    """Switch name prefix: leaf (fat tree), su (rail-optimized scalable unit), block (NVL)."""
    kind = view.fabric.topology.kind
    return {"rail_optimized": "su", "block": "block"}.get(kind, "leaf")


def expected_leaves(view: TrainingView) -> list[list[str]]:
    """Node names per leaf switch (or block), in order; empty for a flat topology."""
    if view.fabric.topology.kind == "flat" or len(view.all_hostnames) < 2:
        return []
    return leaves(view.all_hostnames, _leaf_size(view))


def _switch_names(prefix: str, count: int) -> list[str]:
    width = max(2, len(str(count)))
    return [f"{prefix}{i:0{width}d}" for i in range(1, count + 1)]


def topology_lines(view: TrainingView, version: SlurmVersion) -> list[Line]:
    """topology.conf lines; empty when the topology is flat."""
    kind = topology_kind(view, version)
    groups = expected_leaves(view)
    if kind == "flat" or not groups:
        return []
    names = _switch_names(leaf_prefix(view), len(groups))
    if kind == "block":
        lines: list[Line] = [
            [("BlockName", name), ("Nodes", compress(nodes))]
            for name, nodes in zip(names, groups, strict=True)
        ]
        if slurm.feature(version, "block_sizes"):
            # Base size = NVL domain; each larger size doubles (must be power-of-two multiples).
            base = _leaf_size(view)
            sizes = [base]
            while sizes[-1] * 2 <= base * len(groups):
                sizes.append(sizes[-1] * 2)
            lines.append([("BlockSizes", ",".join(str(s) for s in sizes))])
        return lines
    lines = [
        [("SwitchName", name), ("Nodes", compress(nodes))]
        for name, nodes in zip(names, groups, strict=True)
    ]
    if len(names) > 1:
        lines.append([("SwitchName", "spine"), ("Switches", compress(names))])
    return lines


def _gres(group: GroupView) -> str | None:
    if not group.gpus_per_node:
        return None
    return f"gpu:{group.gpu_gres_type}:{group.gpus_per_node}"


def node_lines(view: TrainingView) -> list[Line]:
    """NodeName lines, one per node group, with the real CPU layout and memory."""
    elastic = bool(view.scheduler.elastic)
    lines: list[Line] = []
    for group in view.groups:
        line: Line = [
            ("NodeName", group.hostlist),
            ("Sockets", group.sockets),
            ("CoresPerSocket", group.cores_per_socket),
            ("ThreadsPerCore", group.threads_per_core),
            ("RealMemory", group.real_memory_mib),
        ]
        gres = _gres(group)
        if gres:
            line.append(("Gres", gres))
        line.append(("Feature", group.name))
        line.append(("State", "CLOUD" if elastic else "UNKNOWN"))
        lines.append(line)
    return lines


def partition_lines(view: TrainingView) -> list[Line]:
    """PartitionName lines; exclusive partitions use OverSubscribe=EXCLUSIVE."""
    by_group = {g.name: g.hostnames for g in view.groups}
    lines: list[Line] = []
    for part in view.scheduler.partitions:
        chosen = part.groups or list(by_group)
        hosts = [h for name in chosen for h in by_group.get(name, [])]
        hours = part.max_time_hours
        lines.append(
            [
                ("PartitionName", part.name),
                ("Nodes", compress(hosts)),
                ("Default", bool(part.default)),
                ("MaxTime", hours * 60 if hours else "INFINITE"),
                ("OverSubscribe", "EXCLUSIVE" if part.exclusive else "NO"),
                ("State", "UP"),
            ]
        )
    return lines


# GPUDirect-TCPXO nodes start Google's receive data path manager (RxDM) and refresh the FasTrak
# NCCL plugin from the Slurm prolog of every multi-node job (roles/fabric rxdm-hook.sh: two
# docker runs and up to 120 s waiting for RxDM), far beyond Slurm's 10 s default
# BatchStartTimeout, which also bounds srun's task launch behind a long prolog (slurm.conf(5)).
# Cluster Toolkit's a3mega Slurm blueprint uses a slurm.conf template with long prolog timeouts
# for that reason: BatchStartTimeout=600, PrologEpilogTimeout=600, MessageTimeout=600
# (community/modules/scheduler/schedmd-slurm-gcp-v6-controller/etc/long-prolog-slurm.conf.tpl,
# GoogleCloudPlatform/cluster-toolkit@1047080375afbb44da4b596be314634e7486af4a). MessageTimeout
# stays at 100, the most Slurm takes without logging "MessageTimeout is too high for effective
# fault-tolerance" (src/common/read_config.c); with PrologFlags=Alloc slurmd answers the
# prolog RPC before it runs the prolog (src/slurmd/slurmd/req.c _rpc_prolog), so the prolog's
# length does not need a longer RPC timeout.
LONG_PROLOG_SECONDS = 600
LONG_PROLOG_MESSAGE_TIMEOUT = 100
LONG_PROLOG_FABRICS = ("gpudirect_tcpxo",)


def long_prolog_lines(view: TrainingView, version: SlurmVersion) -> list[tuple[str, ConfValue]]:
    """Long prolog timeouts for fabrics whose prolog starts a data-path daemon.

    PrologTimeout + EpilogTimeout where the release has them (25.05 on), PrologEpilogTimeout
    before; MessageTimeout and BatchStartTimeout in both.
    """
    if view.fabric.kind not in LONG_PROLOG_FABRICS:
        return []
    seconds = LONG_PROLOG_SECONDS
    lines: list[tuple[str, ConfValue]] = [
        ("MessageTimeout", LONG_PROLOG_MESSAGE_TIMEOUT),
        ("BatchStartTimeout", seconds),
    ]
    if slurm.feature(version, "prolog_epilog_timeouts"):
        return [*lines, ("PrologTimeout", seconds), ("EpilogTimeout", seconds)]
    return [*lines, ("PrologEpilogTimeout", seconds)]


def _typed_tres(view: TrainingView) -> str:
    types = sorted({g.gpu_gres_type for g in view.groups if g.gpus_per_node and g.gpu_gres_type})
    return ",".join(["gres/gpu", *(f"gres/gpu:{t}" for t in types)])


def global_lines(view: TrainingView, version: SlurmVersion) -> list[Line]:
    """Cluster-wide slurm.conf settings, before node and partition lines."""
    sched = view.scheduler
    controllers: list[Line] = [[("SlurmctldHost", view.controller)]]
    if view.backup_controller:
        controllers.append([("SlurmctldHost", view.backup_controller)])
    settings: list[tuple[str, ConfValue]] = [
        ("ClusterName", view.name),
        ("SlurmUser", "slurm"),
        ("AuthType", "auth/munge"),
        ("CredType", "cred/munge"),
        ("StateSaveLocation", STATE_DIR),
        ("SlurmdSpoolDir", SPOOL_DIR),
        ("SlurmctldPidFile", "/run/slurmctld.pid"),
        ("SlurmdPidFile", "/run/slurmd.pid"),
        ("SlurmctldLogFile", f"{LOG_DIR}/slurmctld.log"),
        ("SlurmdLogFile", f"{LOG_DIR}/slurmd.log"),
        ("SlurmctldPort", 6817),
        ("SlurmdPort", 6818),
        ("MailProg", "/bin/true"),
        ("ReturnToService", 2),
        # srun --mpi=pmix by default; the slurm role installs libpmix2 (roles/slurm/pmix.yml).
        ("MpiDefault", "pmix"),
        ("SelectType", "select/cons_tres"),
        ("SelectTypeParameters", "CR_Core_Memory"),
        ("ProctrackType", "proctrack/cgroup"),
        ("TaskPlugin", "task/cgroup,task/affinity"),
        ("PrologFlags", "Alloc,Contain"),
        ("PriorityType", "priority/multifactor"),
        ("TopologyPlugin", topology_plugin(view, version)),
    ]
    if view.gpu_cluster:
        settings.append(("GresTypes", "gpu"))
    if sched.accounting:
        settings += [
            # Gathering without storing makes slurmctld warn, so only with accounting.
            ("JobAcctGatherType", "jobacct_gather/cgroup"),
            ("AccountingStorageType", "accounting_storage/slurmdbd"),
            ("AccountingStorageHost", view.controller),
            ("AccountingStorageTRES", _typed_tres(view) if view.gpu_cluster else "cpu,mem"),
            ("AccountingStorageEnforce", "associations,limits,qos"),
        ]
    else:
        settings.append(("AccountingStorageType", "accounting_storage/none"))
    if "nhc" in sched.health_checks:
        settings += [
            ("HealthCheckProgram", "/usr/sbin/nhc"),
            ("HealthCheckInterval", 300),
            ("HealthCheckNodeState", "ANY"),
        ]
    if "dcgm" in sched.health_checks and view.gpu_cluster:
        settings += [
            ("Prolog", f"{CONF_DIR}/prolog.sh"),
            ("Epilog", f"{CONF_DIR}/epilog.sh"),
        ]
    settings += long_prolog_lines(view, version)
    if view.gpu_cluster:
        # NCCL settings into every task's environment (roles/nccl task_prolog.sh).
        settings.append(("TaskProlog", f"{CONF_DIR}/task_prolog.sh"))
    if sched.containers == "pyxis":
        settings.append(("PlugStackConfig", f"{CONF_DIR}/plugstack.conf"))
    if sched.elastic:
        settings += [
            ("ResumeProgram", f"{CONF_DIR}/resume.sh"),
            ("SuspendProgram", f"{CONF_DIR}/suspend.sh"),
            ("SuspendTime", 600),
            ("ResumeTimeout", 1800),
            ("SuspendTimeout", 300),
            ("TreeWidth", 65533),
            ("SlurmctldParameters", "idle_on_node_suspend,cloud_dns"),
        ]
    overrides = dict(sched.slurm_conf)
    lines = controllers + [[kv] for kv in settings if kv[0] not in overrides]
    # Raw overrides from the blueprint come last (SCH001 lints them).
    lines += [[(key, overrides[key])] for key in sorted(overrides)]
    return lines


def gpu_cores(group: GroupView) -> list[list[int]] | None:
    """Slurm core indices local to each GPU, from the catalog's OS CPU lists; None if unknown.

    gres.conf(5) Cores= takes Slurm's logical core index (core 0 is the first core of the first
    socket, numbered through the sockets of the NodeName line), not OS CPU ids. Linux numbers
    the first hardware thread of every core 0..C-1 in socket order and the SMT siblings C..2C-1
    (C = Sockets x CoresPerSocket), so OS CPU c is core c mod C. A list that does not fit the
    node's layout (a CPU beyond it, or a core with only some of its threads) gives None.
    """
    cpus = group.gpu_cpus
    if not cpus or len(cpus) != group.gpus_per_node:
        return None
    cores_total = group.sockets * group.cores_per_socket
    threads = group.threads_per_core
    out: list[list[int]] = []
    for text in cpus:
        ids = int_list(text)
        cores = sorted({cpu % cores_total for cpu in ids})
        siblings = {core + k * cores_total for core in cores for k in range(threads)}
        if max(ids) >= cores_total * threads or ids != siblings:
            return None
        out.append(cores)
    return out


def _devices(first: int, last: int) -> str:
    return f"/dev/nvidia{first}" if first == last else f"/dev/nvidia[{first}-{last}]"


def _autodetect(view: TrainingView, version: SlurmVersion) -> str:
    autodetect = str(view.scheduler.gres_autodetect)
    if autodetect == "nvidia" and not slurm.feature(version, "gres_autodetect_nvidia"):
        autodetect = "off"  # AutoDetect=nvidia appeared in 24.11
    if view.scheduler.elastic:
        autodetect = "off"  # gres.conf(5): AutoDetect cannot be used with cloud nodes
    return autodetect


def gres_lines(view: TrainingView, version: SlurmVersion) -> list[Line]:
    """gres.conf lines: explicit device files unless AutoDetect is allowed and asked for.

    With explicit files, GPUs that share their local cores are one line with Cores= (the
    catalog's GPU affinity); without a known affinity the line has no Cores= (any core).
    With AutoDetect, NVML (or /proc/driver/nvidia) reports files and affinity itself.
    """
    autodetect = _autodetect(view, version)
    lines: list[Line] = []
    for group in view.groups:
        count = group.gpus_per_node
        if not count:
            continue
        head: Line = [("NodeName", group.hostlist), ("AutoDetect", autodetect)]
        assert group.gpu_gres_type is not None, "a GPU group has a GRES type"
        head += [("Name", "gpu"), ("Type", group.gpu_gres_type)]
        if autodetect != "off":
            lines.append([*head, ("Count", count)])
            continue
        cores = gpu_cores(group)
        if cores is None:
            lines.append([*head, ("File", _devices(0, count - 1))])
            continue
        first = 0
        for index in range(1, count + 1):
            if index < count and cores[index] == cores[first]:
                continue
            files = ("File", _devices(first, index - 1))
            lines.append([*head, files, ("Cores", int_ranges(cores[first]))])
            first = index
    return lines


@dataclass(frozen=True, slots=True)
class GresNote:
    """Where one GPU group's Cores= come from, for the comment above gres.conf's lines."""

    nodes: str
    instance_type: str | None
    source: str | None  # None: no Cores= for this group
    misfit: bool  # the catalog has the affinity, but the blueprint's CPU layout does not fit it
    elastic: bool  # CLOUD nodes cannot use AutoDetect (SCH002), so it is no advice for them


def gres_notes(view: TrainingView, version: SlurmVersion) -> list[GresNote]:
    """Per GPU group with explicit files: where its Cores= come from (None: no Cores=)."""
    autodetect = _autodetect(view, version)
    notes: list[GresNote] = []
    for group in view.groups:
        if not group.gpus_per_node or autodetect != "off":
            continue
        fits = gpu_cores(group) is not None
        notes.append(
            GresNote(
                nodes=group.hostlist,
                instance_type=group.instance_type,
                source=group.gpu_cpus_source if fits else None,
                misfit=bool(group.gpu_cpus) and not fits,
                elastic=bool(view.scheduler.elastic),
            )
        )
    return notes


def cgroup_lines(version: SlurmVersion) -> list[Line]:
    """cgroup.conf: confine cores, memory and devices (GPUs) to the job."""
    # autodetect picks v2 where the host runs it; cgroup/v1 is deprecated from 25.05.
    plugin = "autodetect"
    return [
        [("CgroupPlugin", plugin)],
        [("ConstrainCores", True)],
        [("ConstrainRAMSpace", True)],
        [("ConstrainDevices", True)],
    ]


def slurmdbd_lines(view: TrainingView) -> list[Line]:
    """slurmdbd.conf without StoragePass (Ansible writes it from the controller's secret file).

    StorageType=accounting_storage/mysql: the plugin slurmdbd stores the accounting in MariaDB
    with (the build path builds it only with libmariadb-dev; data/slurm_build.yaml).
    """
    if not view.scheduler.accounting:
        return []
    return [
        [("AuthType", "auth/munge")],
        [("DbdHost", view.controller)],
        [("SlurmUser", "slurm")],
        [("LogFile", f"{LOG_DIR}/slurmdbd.log")],
        [("PidFile", "/run/slurmdbd.pid")],
        [("StorageType", "accounting_storage/mysql")],
        [("StorageHost", "localhost")],
        [("StorageUser", "slurm")],
        [("StorageLoc", "slurm_acct_db")],
    ]


@dataclass(frozen=True, slots=True)
class SlurmContext:
    """Everything the Slurm templates need, for one Slurm version."""

    slurm_version: str
    global_lines: list[Line]
    node_lines: list[Line]
    partition_lines: list[Line]
    gres_lines: list[Line]
    gres_notes: list[GresNote]
    cgroup_lines: list[Line]
    topology_lines: list[Line]
    topology_kind: str
    slurmdbd_lines: list[Line]

    def conf_files(self) -> dict[str, list[Line]]:
        """The generated files as lines, by name (what the plugin inventory is read from)."""
        files = {
            "slurm.conf": self.global_lines + self.node_lines + self.partition_lines,
            "cgroup.conf": self.cgroup_lines,
        }
        if self.gres_lines:
            files["gres.conf"] = self.gres_lines
        if self.slurmdbd_lines:
            files["slurmdbd.conf"] = self.slurmdbd_lines
        return files


def slurm_context(view: TrainingView, version_text: str | None = None) -> SlurmContext:
    """Everything the Slurm templates need, for the blueprint's version or a given one."""
    version = slurm.parse_version(version_text or view.scheduler.version)
    return SlurmContext(
        slurm_version=version.release,
        global_lines=global_lines(view, version),
        node_lines=node_lines(view),
        partition_lines=partition_lines(view),
        gres_lines=gres_lines(view, version),
        gres_notes=gres_notes(view, version),
        cgroup_lines=cgroup_lines(version),
        topology_lines=topology_lines(view, version),
        topology_kind=topology_kind(view, version),
        slurmdbd_lines=slurmdbd_lines(view),
    )

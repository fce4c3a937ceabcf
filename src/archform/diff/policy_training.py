"""Update-policy rows for TrainingCluster fields (see `policy.py` for the classes)."""

from __future__ import annotations

from archform.diff import placement, refine
from archform.diff.refine import DATA, INPLACE, NODES, OUTAGE, ROLL, Rule

_T = "TrainingCluster"


def _groups() -> list[Rule]:
    rows: list[Rule] = []
    for prefix in ("compute", "compute.extra_groups[]"):
        rows += [
            Rule(
                _T,
                f"{prefix}.nodes",
                INPLACE,
                "node count: new nodes join, or surplus nodes are drained and removed",
                # per provider: GCP compact placement replaces every VM (see placement.py)
                placement.node_count,
            ),
            Rule(
                _T,
                f"{prefix}.instance_type",
                NODES,
                "the instance type is fixed per instance: the group's nodes are relaunched",
            ),
            Rule(
                _T,
                f"{prefix}.gpu",
                NODES,
                "GPU model or count per node is hardware: the group's nodes are replaced",
            ),
            Rule(
                _T,
                f"{prefix}.cpu",
                NODES,
                "node hardware changes: nodes are re-provisioned and re-registered in Slurm",
            ),
            Rule(
                _T,
                f"{prefix}.memory_gib",
                NODES,
                "node hardware changes: nodes are re-provisioned and re-registered in Slurm",
            ),
            Rule(
                _T,
                f"{prefix}.purchase",
                NODES,
                "the purchase option is fixed at launch: nodes are relaunched under the new one",
            ),
            Rule(
                _T,
                f"{prefix}.capacity_reservation_id",
                NODES,
                "instances launch into a reservation: nodes are relaunched into the new one",
            ),
            Rule(
                _T,
                f"{prefix}.name",
                NODES,
                "node names derive from the group name: nodes are renamed and re-registered",
            ),
        ]
    rows.append(
        Rule(
            _T,
            "compute.extra_groups[]",
            NODES,
            "unlisted node-group setting: assumed to replace the group's nodes",
            placement.group_added_removed,
        )
    )
    return rows


TRAINING_RULES: tuple[Rule, ...] = (
    Rule(_T, "purpose", INPLACE, "purpose steers lint rules and defaults; nothing is redeployed"),
    Rule(
        _T,
        "placement.provider",
        OUTAGE,
        "another provider means a new cluster: nodes, network and file systems are rebuilt",
    ),
    Rule(
        _T,
        "placement.region",
        OUTAGE,
        "every resource is recreated in the new region and the data must be copied",
        refine.training_region,
    ),
    Rule(
        _T,
        "placement.regions",
        OUTAGE,
        "every resource is recreated in the new region and the data must be copied",
        refine.training_region,
    ),
    Rule(
        _T,
        "placement.zones",
        OUTAGE,
        "subnets, placement group and file systems are zonal: moving zones recreates them all",
    ),
    Rule(
        _T,
        "placement.colocation",
        NODES,
        "running instances cannot join or leave a placement group: nodes are relaunched",
        placement.colocation,
    ),
    Rule(
        _T,
        "placement.network",
        OUTAGE,
        "a VPC's CIDR cannot change: the network and everything attached to it is recreated",
    ),
    *_groups(),
    Rule(_T, "compute.rack", INPLACE, "facility metadata; nothing is redeployed"),
    Rule(
        _T,
        "compute.image",
        NODES,
        "the node image is the boot disk: every node is replaced and set up again",
    ),
    Rule(
        _T,
        "fabric.kind",
        OUTAGE,
        "the fabric decides NICs, drivers, network and NCCL transport: the whole cluster is "
        "re-provisioned",
    ),
    Rule(
        _T,
        "fabric.topology",
        OUTAGE,
        "the network layout changes (recabling or new placement) and topology.conf needs "
        "slurmctld and every slurmd restarted together",
    ),
    Rule(
        _T,
        "fabric.gbps_per_node",
        NODES,
        "per-node NIC count and speed are hardware and image level: nodes are replaced",
    ),
    Rule(
        _T,
        "fabric.rails",
        NODES,
        "per-node NIC count and speed are hardware and image level: nodes are replaced",
    ),
    Rule(
        _T,
        "fabric.gpudirect_rdma",
        NODES,
        "GPUDirect RDMA needs the peer-memory module in the node image: nodes are re-imaged",
    ),
    Rule(
        _T,
        "fabric.sharp",
        ROLL,
        "SHARP is switched through the NCCL plugin environment: nodes restart their daemons",
    ),
    Rule(
        _T,
        "fabric.hcas",
        ROLL,
        "NCCL environment (HCA list) changes: nodes pick it up as they restart",
    ),
    Rule(
        _T,
        "fabric.socket_ifname",
        ROLL,
        "NCCL bootstrap interface changes: nodes pick it up as they restart",
    ),
    Rule(
        _T,
        "fabric.roce",
        ROLL,
        "RoCE traffic class / GID index changes: nodes pick it up as they restart",
    ),
    Rule(
        _T,
        "storage[]",
        DATA,
        "unlisted storage setting: assumed to need a new file system",
        refine.storage_entry,
    ),
    Rule(
        _T,
        "storage[].kind",
        DATA,
        "storage kind cannot change: a new file system is created and the data must be copied",
    ),
    Rule(
        _T,
        "storage[].deployment",
        DATA,
        "deployment type is fixed at creation: a new file system is created and the data "
        "must be copied",
    ),
    Rule(_T, "storage[].capacity_tib", DATA, "capacity changed", refine.capacity),
    Rule(
        _T,
        "storage[].filestore_tier",
        DATA,
        # "After you create a Filestore instance, you can't change its tier"
        # (cloud.google.com/filestore/docs/service-tiers, "Choosing a tier").
        "a Filestore instance cannot change tier: a new instance is created and the data "
        "must be copied",
    ),
    Rule(
        _T,
        "storage[].encrypted",
        DATA,
        "encryption at rest is fixed at creation: a new file system is created and the data "
        "must be copied",
    ),
    Rule(
        _T,
        "storage[].region",
        DATA,
        "the file system is recreated in another region and the data must be copied",
    ),
    Rule(
        _T,
        "storage[].throughput_mbps_per_tib",
        INPLACE,
        "throughput changed",
        # FSx for Lustre: persistent SSD throughput tiers can be raised or lowered in place, with
        # a brief pause (docs.aws.amazon.com/fsx/latest/LustreGuide/managing-throughput-capacity)
        refine.scratch_fixed(
            "a persistent file system changes throughput tier in place (brief pause)"
        ),
    ),
    Rule(
        _T,
        "storage[].source",
        INPLACE,
        "data repository changed",
        refine.scratch_fixed("the data repository link is replaced; files already loaded stay"),
    ),
    Rule(
        _T,
        "storage[].mount",
        ROLL,
        "every node remounts at the new path; jobs using the old path break",
    ),
    Rule(_T, "storage[].endpoint", ROLL, "every node remounts from the new server"),
    Rule(_T, "storage[].purpose", INPLACE, "purpose steers lint rules only; nothing is redeployed"),
    Rule(
        _T,
        "storage[].stripe_count",
        INPLACE,
        "default striping applies to newly written files only",
    ),
    Rule(
        _T,
        "scheduler.kind",
        OUTAGE,
        "another scheduler is a new control plane: every running job stops",
    ),
    Rule(_T, "scheduler.version", OUTAGE, "Slurm version changed", refine.slurm_version),
    Rule(
        _T,
        "scheduler.controller_instance_type",
        OUTAGE,
        "the controller is replaced: slurmctld is down while the new instance boots",
    ),
    Rule(
        _T,
        "scheduler.backup_controller",
        ROLL,
        "SlurmctldHost list changes: daemons restart with the new slurm.conf",
    ),
    Rule(
        _T,
        "scheduler.partitions",
        ROLL,
        "partitions are slurm.conf: `scontrol reconfigure`, the controller stays "
        "(cf. cluster-toolkit#2774, where a partition change replaced the controller)",
        refine.entry_added_removed(
            (ROLL, "partition added: slurm.conf reconfigure; running jobs continue"),
            (ROLL, "partition removed: slurm.conf reconfigure; its queued jobs are rejected"),
        ),
    ),
    Rule(
        _T,
        "scheduler.accounting",
        ROLL,
        "accounting storage changes slurm.conf and slurmdbd: the controller restarts",
    ),
    Rule(
        _T,
        "scheduler.containers",
        ROLL,
        "pyxis is a SPANK plugin in plugstack.conf: slurmd restarts on every node",
    ),
    Rule(
        _T,
        "scheduler.health_checks",
        ROLL,
        "HealthCheckProgram and DCGM settings change: slurmd restarts on every node",
    ),
    Rule(_T, "scheduler.gres_autodetect", ROLL, "gres.conf changes: slurmd restarts"),
    Rule(
        _T,
        "scheduler.accounts",
        INPLACE,
        "accounts, users and QOS are sacctmgr records: applied on the controller, no restart",
    ),
    Rule(
        _T,
        "scheduler.qos",
        INPLACE,
        "QOS are sacctmgr records: applied on the controller, no restart",
    ),
    Rule(
        _T,
        "scheduler.slurm_conf",
        ROLL,
        "slurm.conf overrides: daemons restart with the new configuration",
    ),
    Rule(
        _T,
        "scheduler.elastic",
        NODES,
        "static and power-saving CLOUD nodes are launched differently: nodes are recreated",
    ),
    Rule(
        _T,
        "scheduler.login_nodes",
        INPLACE,
        "login nodes are added or removed; compute nodes are untouched",
    ),
    Rule(_T, "training", INPLACE, "workload facts feed lint rules and estimates only"),
    Rule(_T, "access", INPLACE, "firewall rules are updated in place"),
    Rule(_T, "extensions", INPLACE, "the team's own extension folders changed"),
    Rule(
        _T,
        "extensions.ansible",
        INPLACE,
        "the team's task folder changed: its tasks run at the next site.yml run; what they "
        "do to the nodes is theirs to judge",
    ),
    Rule(
        _T,
        "extensions.pulumi",
        INPLACE,
        "the team's Pulumi package changed: `pulumi preview` shows what its resources do",
    ),
    Rule(_T, "hosts", NODES, "the inventory now names every host: nodes are re-registered"),
    Rule(_T, "hosts.connection", INPLACE, "how Ansible reaches the hosts; nothing on them"),
    Rule(_T, "hosts.controller", OUTAGE, "the controller host changes: slurmctld moves"),
    Rule(_T, "hosts.login", INPLACE, "login hosts change; compute nodes are untouched"),
    Rule(
        _T,
        "hosts.compute",
        NODES,
        "the host's inventory entry changes: it is re-provisioned",
        refine.entry_added_removed(
            (INPLACE, "host added: it is provisioned and joins"),
            (INPLACE, "host removed: it is drained and leaves"),
        ),
    ),
    Rule(
        _T,
        "hosts.compute[].address",
        NODES,
        "the host's address changes: it is re-provisioned and re-registered",
    ),
)

"""The TrainingCluster blueprint: tightly coupled GPU nodes, fabric, Lustre, Slurm."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from archform.spec import slurm
from archform.spec.errors import FieldError, HintedError
from archform.spec.images import default_image
from archform.spec.models.common import (
    Address,
    Cidr,
    CloudId,
    Count,
    CpuTopology,
    DocumentBase,
    Gpu,
    HostName,
    InstanceType,
    Ipv4Cidr,
    MountPath,
    Provider,
    RaisedQuotas,
    Region,
    StorageUri,
    Strict,
    Zone,
)
from archform.spec.open_models import fill_from_named
from archform.spec.provider import field_doc, spec_of

FilestoreTier = Literal[
    "BASIC_HDD", "BASIC_SSD", "ZONAL", "REGIONAL", "HIGH_SCALE_SSD", "ENTERPRISE"
]
FabricKind = Literal["infiniband", "roce", "efa", "gpudirect_tcpxo", "gpudirect_tcpx", "ethernet"]
Purchase = Literal["on_demand", "reserved", "capacity_block", "spot"]


class Network(Strict):
    """The cluster's networks: the VPC/VNet from `cidr` (or existing ids reused) and more.

    On GCP also the GPU VPCs and the private services access range. Every range archform
    carves comes from one of these fields; validate refuses any two that overlap
    (spec/networks.py).
    """

    cidr: Ipv4Cidr = Field(
        default="10.42.0.0/16",
        description=field_doc("network.cidr", "The system network."),
    )
    gpu_cidr: Ipv4Cidr = Field(
        default="10.64.0.0/16",
        description=field_doc("network.gpu_cidr", ""),
    )
    rdma_cidr: Ipv4Cidr = Field(
        default="10.65.0.0/16",
        description=field_doc("network.rdma_cidr", ""),
    )
    psa_cidr: Ipv4Cidr | None = Field(
        default=None,
        description=field_doc("network.psa_cidr", ""),
    )
    existing_vpc_id: CloudId | None = None
    existing_subnet_ids: list[CloudId] = Field(default_factory=list)


class TrainingPlacement(Strict):
    """Where the cluster runs. A training cluster belongs in one region and one zone."""

    provider: Provider
    region: Region | None = Field(default=None, description="Cloud region, or on-prem site.")
    regions: list[Region] | None = Field(
        default=None, description="Accepted so it can be linted (TRN001); use `region`."
    )
    zones: list[Zone] = Field(default_factory=list)
    colocation: Literal["cluster", "spread", "none"] = "cluster"
    network: Network = Field(default_factory=Network)
    quotas: RaisedQuotas = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_region_field(self) -> TrainingPlacement:
        if self.region is None and self.regions is None:
            raise HintedError("give `region` (or `regions`)", "add region: us-east-1 (or a site)")
        if self.region is not None and self.regions is not None:
            raise FieldError(
                "regions",
                "give exactly one of `region` or `regions`, not both",
                "a training cluster belongs in one region: keep `region`",
            )
        if self.regions is not None and not self.regions:
            raise FieldError("regions", "`regions` must not be empty", "name the region")
        return self

    @property
    def all_regions(self) -> tuple[str, ...]:
        """Every region named, in order, without duplicates."""
        names = [self.region] if self.region is not None else list(self.regions or [])
        return tuple(dict.fromkeys(names))

    @property
    def primary_region(self) -> str:
        """The region the cluster is built in (the first one named)."""
        return self.all_regions[0]


class Rack(Strict):
    """On-prem facility facts."""

    kw_per_rack: Annotated[float, Field(gt=0, le=500)]
    cooling: Literal["air", "liquid", "rear_door"] = "air"


class NodeGroup(Strict):
    """A set of identical nodes. The `compute` block is the first group."""

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9]{0,15}$")] = "gpu"
    nodes: Annotated[int, Field(ge=1, le=100_000)]
    instance_type: InstanceType | None = None
    gpu: Gpu | None = None
    cpu: CpuTopology | None = None
    memory_gib: Annotated[int, Field(ge=1, le=65536)] | None = None
    purchase: Purchase = "on_demand"
    capacity_reservation_id: CloudId | None = None

    @property
    def targets_reservation(self) -> bool:
        """The nodes launch into one named reservation: a Capacity Block, or `reserved` with an id.

        On AWS such a reservation fixes where its instances run (a Capacity Block is co-located
        by itself, a targeted On-Demand Capacity Reservation carries the placement group it was
        created in), and a cluster placement group on top of it causes insufficient-capacity
        launch failures: AWS's own p5 ParallelCluster configs set `PlacementGroup: Enabled:
        false` for a targeted ODCR
        (https://github.com/aws-samples/awsome-distributed-training/tree/main/1.architectures/2.aws-parallelcluster)
        and ParallelCluster refuses a placement group with a Capacity Block
        (PlacementGroupCapacityTypeValidator).
        """
        return self.purchase == "capacity_block" or (
            self.purchase == "reserved" and self.capacity_reservation_id is not None
        )


class Compute(NodeGroup):
    """Compute nodes of the cluster (the primary node group)."""

    rack: Rack | None = None
    image: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.-]{0,62}$")] | None = Field(
        default=None,
        description="Node image id from archform's image table (`archform images`); "
        "default: the first image of the provider that provides the fabric and Lustre client.",
    )
    extra_groups: list[NodeGroup] = Field(
        default_factory=list,
        description="Further node groups (e.g. an older GPU generation); linted by TRN007.",
    )

    @property
    def groups(self) -> tuple[NodeGroup, ...]:
        """All node groups, primary first."""
        return (self, *self.extra_groups)

    @property
    def total_nodes(self) -> int:
        """Nodes over all groups."""
        return sum(g.nodes for g in self.groups)

    @property
    def total_gpus(self) -> int:
        """GPUs over all groups."""
        return sum(g.nodes * (g.gpu.per_node if g.gpu else 0) for g in self.groups)


class Topology(Strict):
    """Fabric topology: drives Slurm's topology.conf and NCCL settings."""

    kind: Literal["fat_tree", "rail_optimized", "block", "flat"] = "fat_tree"
    nodes_per_leaf: Annotated[int, Field(ge=1, le=4096)] = 32
    block_size: Annotated[int, Field(ge=1, le=1024)] = 18


class Roce(Strict):
    """RoCEv2 traffic class settings (switch side must match)."""

    dscp: Annotated[int, Field(ge=0, le=63)] = 26
    gid_index: Annotated[int, Field(ge=0, le=255)] | None = None


class Fabric(Strict):
    """GPU-to-GPU network. Defaults come from the instance type in the catalog."""

    kind: FabricKind
    gbps_per_node: Annotated[int, Field(ge=1, le=100_000)]
    rails: Annotated[int, Field(ge=1, le=64)] = 1
    topology: Topology = Field(default_factory=Topology)
    gpudirect_rdma: bool = True
    sharp: bool = False
    hcas: list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")]] | None = Field(
        default=None, description="Exact HCA names (e.g. mlx5_0); NCCL_IB_HCA gets '=' exact match."
    )
    socket_ifname: Annotated[str, Field(pattern=r"^[a-z][a-z0-9.-]{0,15}$")] | None = None
    roce: Roce = Field(default_factory=Roce)


# One LNet network with its interfaces, as lnet's `networks=` module option spells it
# (https://wiki.lustre.org/LNet_Router_Config_Guide): o2ib(ib0), o2ib1(ib0,ib1), tcp(bond0), tcp.
LnetNetwork = Annotated[
    str,
    Field(pattern=r"^(o2ib|tcp|kfi)[0-9]{0,3}(\([A-Za-z0-9_.-]{1,15}(,[A-Za-z0-9_.-]{1,15})*\))?$"),
]


def lnet_network(text: str) -> str:
    """The network name of an LNet spec or NID suffix: 'o2ib(ib0)' -> 'o2ib0', 'tcp' -> 'tcp0'."""
    name = text.partition("(")[0]
    return name if name[-1:].isdigit() else f"{name}0"


class Storage(Strict):
    """One file system or bucket the cluster mounts or reads."""

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,38}$")]
    kind: Literal["lustre", "nfs", "object", "local_nvme", "gpfs", "weka"]
    purpose: Literal["training_data", "checkpoints", "home", "scratch", "models"]
    capacity_tib: Annotated[float, Field(gt=0, le=1_000_000)] | None = Field(
        default=None,
        description="Size in TiB. Not used for object storage; cloud Lustre defaults to the "
        "service's minimum for the tier; local_nvme to the nodes' local NVMe (catalog).",
    )
    throughput_mbps_per_tib: Annotated[int, Field(ge=1, le=100_000)] | None = None
    mount: MountPath | None = None
    source: StorageUri | None = None
    region: Region | None = None
    encrypted: bool = True
    deployment: Literal["persistent", "scratch"] = Field(
        default="persistent", description="Replicated (persistent) or not (scratch)."
    )
    endpoint: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9.@:/_,-]{0,200}$")] | None = (
        Field(default=None, description="On-prem server: 'mgs@o2ib:/fsname' or 'nfs01:/export'.")
    )
    stripe_count: Annotated[int, Field(ge=-1, le=2000)] | None = None
    filestore_tier: FilestoreTier | None = Field(
        default=None,
        description=field_doc("storage.filestore_tier", ""),
    )
    lnet: LnetNetwork | None = Field(
        default=None,
        description="On-prem Lustre: the LNet network and interface(s) the client reaches this "
        "file system on, e.g. 'o2ib(ibp12s0)' or 'tcp(bond0)' (lnet `networks=`). Default: "
        "'o2ib(ib0)' on an InfiniBand fabric, 'tcp' otherwise.",
    )

    @model_validator(mode="after")
    def _sized(self) -> Storage:
        if self.capacity_tib is None and self.kind != "object":
            raise FieldError(
                "capacity_tib",
                f"storage {self.name!r} of kind {self.kind} needs capacity_tib",
                "add capacity_tib: <TiB> (only object storage has no size; local_nvme takes "
                "the instance type's local NVMe from archform's catalog)",
            )
        if self.kind == "object" and self.mount is not None:
            raise FieldError(
                "mount",
                f"storage {self.name!r}: archform does not mount object storage on the nodes "
                "(no gcsfuse, mountpoint-s3 or blobfuse2 is installed), so `mount` would be "
                "ignored",
                "remove mount and give the bucket as `source`; to have it on a path, put a "
                "Lustre entry in front of it (source: the bucket) or mount it from the job",
            )
        if self.filestore_tier is not None and self.kind != "nfs":
            raise FieldError(
                "filestore_tier",
                f"storage {self.name!r} is {self.kind}: only nfs storage is a Filestore",
                "remove filestore_tier",
            )
        if self.lnet is not None:
            if self.kind != "lustre":
                raise FieldError(
                    "lnet",
                    f"storage {self.name!r} is {self.kind}: only Lustre has an LNet network",
                    "remove lnet",
                )
            nid = (self.endpoint or "").partition(":")[0]
            served = lnet_network(nid.rpartition("@")[2]) if "@" in nid else None
            if served is not None and served != lnet_network(self.lnet):
                raise FieldError(
                    "lnet",
                    f"storage {self.name!r}: the server's NID is on LNet network {served!r} "
                    f"({self.endpoint}), lnet names {lnet_network(self.lnet)!r}",
                    f"use lnet: {served}(<interface>) for this file system",
                )
        return self

    @property
    def size_tib(self) -> float:
        """capacity_tib, 0 for object storage written without one."""
        return self.capacity_tib or 0.0


class Partition(Strict):
    """A Slurm partition."""

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,30}$")]
    default: bool = False
    max_time_hours: Annotated[int, Field(ge=1, le=8760)] | None = None
    exclusive: bool = True
    groups: list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9]{0,15}$")]] | None = None


SlurmName = Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_-]{0,31}$")]


class Qos(Strict):
    """A Slurm QOS created with sacctmgr."""

    name: SlurmName
    priority: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    max_gpus_per_user: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    max_wall_hours: Annotated[int, Field(ge=1, le=8760)] | None = None


class Account(Strict):
    """A Slurm account with its users (named, or every member of a Unix group) and QOS."""

    name: SlurmName
    description: Annotated[str, Field(pattern=r"^[A-Za-z0-9 ._,-]{0,100}$")] = ""
    users: list[SlurmName] = Field(default_factory=list)
    unix_group: SlurmName | None = Field(
        default=None, description="Every member of this group (getent on the controller)."
    )
    qos: list[SlurmName] = Field(default_factory=list, description="Allowed QOS; first = default.")


SlurmOption = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9]{1,63}$")]
SlurmValue = (
    Annotated[str, Field(pattern=r"^[A-Za-z0-9_./:,=+@%-]{0,200}$")]
    | Annotated[int, Field(ge=-(2**63), le=2**64 - 1)]  # slurm.conf numbers are <= 64-bit
    | bool
)


class Scheduler(Strict):
    """Slurm (or Kubernetes) on the cluster."""

    kind: Literal["slurm", "kubernetes"] = "slurm"
    version: Annotated[
        str,
        Field(pattern=r"^\d{2}\.\d{2}(\.\d{1,2})?$", description='Slurm version, quoted: "23.11"'),
    ] = slurm.default_version()  # one home: spec/data/slurm/upgrades.json
    partitions: list[Partition] = Field(
        default_factory=lambda: [Partition(name="train", default=True, exclusive=True)]
    )
    accounting: bool = False
    containers: Literal["pyxis", "none"] = "none"
    health_checks: list[Literal["nhc", "dcgm"]] = Field(
        default_factory=list,
        description="Node health checks: NHC (HealthCheckProgram) and the DCGM prolog. "
        "Default: [nhc, dcgm] on a Slurm cluster with GPUs, [] without GPUs; write [] to "
        "turn them off (SCH003 then warns).",
    )
    backup_controller: bool = False
    controller_instance_type: InstanceType | None = None
    login_nodes: Annotated[int, Field(ge=0, le=16)] = 1
    elastic: bool = Field(
        default=False, description="Nodes are Slurm CLOUD nodes, powered up and down on demand."
    )
    gres_autodetect: Literal["off", "nvml", "nvidia"] = "off"
    accounts: list[Account] = Field(
        default_factory=list,
        description="Accounts and users created with sacctmgr (needs accounting: true).",
    )
    qos: list[Qos] = Field(default_factory=list, description="QOS created with sacctmgr.")
    slurm_conf: dict[SlurmOption, SlurmValue] = Field(
        default_factory=dict, description="Raw slurm.conf overrides (checked by SCH001)."
    )

    @model_validator(mode="after")
    def _known_version(self) -> Scheduler:
        if self.kind == "slurm" and not slurm.is_supported(self.version):
            raise FieldError(
                "version",
                f"Slurm {self.version} is not supported",
                f"choose one of {', '.join(slurm.supported_releases())}",
            )
        if self.accounts and not self.accounting:
            raise FieldError(
                "accounts",
                "accounts need Slurm accounting (slurmdbd)",
                "set accounting: true, or remove accounts",
            )
        known_qos = {"normal", *(q.name for q in self.qos)}
        for account in self.accounts:
            for name in account.qos:
                if name not in known_qos:
                    raise FieldError(
                        "accounts",
                        f"account {account.name!r} names QOS {name!r}, which is not defined",
                        f"add it under qos:, or use one of {', '.join(sorted(known_qos))}",
                    )
        if self.kind == "slurm" and not self.partitions:
            # slurm.conf without a PartitionName line: sbatch and srun have nowhere to put a
            # job (https://slurm.schedmd.com/slurm.conf.html#SECTION_PARTITION-CONFIGURATION)
            raise FieldError(
                "partitions",
                "a Slurm scheduler needs at least one partition; with none, no job can run",
                "remove `partitions: []` to get the default train partition, or list one",
            )
        defaults = [p.name for p in self.partitions if p.default]
        if len(defaults) > 1:
            raise FieldError(
                "partitions",
                f"only one partition may be default, got {', '.join(defaults)}",
                "set default: true on one partition only",
            )
        return self

    @property
    def version_tuple(self) -> tuple[int, int]:
        """(major, minor), e.g. (23, 11)."""
        return slurm.parse_version(self.version).release_tuple

    @property
    def slurm_version(self) -> slurm.SlurmVersion:
        """The declared version, parsed (archform.spec.slurm is the one parser)."""
        return slurm.parse_version(self.version)


class TrainingWorkload(Strict):
    """What the cluster trains; used by quantitative rules and estimates."""

    @model_validator(mode="before")
    @classmethod
    def _named_shape(cls, data: Any) -> Any:
        return fill_from_named(
            data, "model", {"layers": "layers", "hidden_size": "hidden_size"}, "model_params"
        )

    framework: Literal[
        "pytorch_ddp",
        "pytorch_fsdp",
        "deepspeed",
        "megatron",
        "nemo",
        "jax",
        "horovod",
        "custom_mpi",
    ] = "pytorch_fsdp"
    model: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")] | None = Field(
        default=None,
        description="The published model trained (or fine-tuned), by name in archform's "
        "model table: fills model_params, layers and hidden_size; lint reads its heads.",
    )
    zero_stage: Literal[0, 1, 2, 3] | None = Field(
        default=None,
        description="What data parallelism shards (ZeRO stage: 1 optimizer state, 2 also "
        "gradients, 3 also weights). Default from the framework: pytorch_ddp 0, "
        "pytorch_fsdp 3 (FULL_SHARD), deepspeed 0, megatron 0, nemo 1 (distributed optimizer).",
    )

    model_params: Count | None = None
    precision: Literal["bf16", "fp16", "fp8", "fp32"] = "bf16"
    global_batch_tokens: Count = 4e6
    checkpoint_interval_minutes: Annotated[int, Field(ge=1, le=10080)] | None = None
    # Optional inputs of the step-time estimate (archform.estimate.training); the defaults
    # are plain data parallelism over every GPU.
    sequence_length: Annotated[int, Field(ge=1, le=10_000_000)] = Field(
        default=4096, description="Tokens per training sequence."
    )
    tensor_parallel: Annotated[int, Field(ge=1, le=64)] = Field(
        default=1, description="Tensor-parallel degree (GPUs per layer, inside a node)."
    )
    pipeline_parallel: Annotated[int, Field(ge=1, le=512)] = Field(
        default=1, description="Pipeline stages."
    )
    micro_batch_size: Annotated[int, Field(ge=1, le=4096)] = Field(
        default=1, description="Sequences per micro-batch (sets the pipeline bubble)."
    )
    virtual_pipeline_stages: Annotated[int, Field(ge=1, le=512)] = Field(
        default=1,
        description="Model chunks per pipeline rank (interleaved 1F1B when above 1: the bubble "
        "is (PP - 1) / (chunks x micro-batches)).",
    )
    context_parallel: Annotated[int, Field(ge=1, le=1024)] = Field(
        default=1, description="GPUs each sequence is split over (context parallelism)."
    )
    activation_checkpointing: Literal["none", "selective", "full"] = Field(
        default="selective",
        description="full recomputes the whole forward pass (one more forward's FLOPs).",
    )
    layers: Annotated[int, Field(ge=1, le=10_000)] | None = Field(
        default=None, description="Transformer layers (default: the nearest reference model)."
    )
    hidden_size: Annotated[int, Field(ge=1, le=1_000_000)] | None = Field(
        default=None, description="Model width (default: the nearest reference model)."
    )
    token_budget: Count | None = Field(
        default=None, description="Tokens to train on: the estimate gives time and cost."
    )


class Access(Strict):
    """Who may reach the cluster. Private by default: no SSH from anywhere."""

    ssh_cidrs: list[Cidr] = Field(default_factory=list)


class Host(Strict):
    """An on-prem host."""

    name: HostName
    address: Address


class Hosts(Strict):
    """On-prem inventory. Without it, names derive from the cluster name."""

    connection: Literal["ssh", "local"] = "ssh"
    controller: Host
    login: list[Host] = Field(default_factory=list)
    compute: list[Host] = Field(default_factory=list)


ExtensionDir = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9._-][A-Za-z0-9._/-]{0,200}$",
        description="A folder relative to the blueprint file.",
    ),
]


class Extensions(Strict):
    """The team's own Ansible tasks and Pulumi code (see archform.spec.extensions)."""

    ansible: ExtensionDir | None = Field(
        default=None,
        description="Folder of task files per hook: base/, compute/, site/ (*.yml), "
        "included by site.yml.",
    )
    pulumi: ExtensionDir | None = Field(
        default=None,
        description="Python package folder (__init__.py with extend(**built)) the Pulumi "
        "program imports and calls last.",
    )


class TrainingCluster(DocumentBase):
    """A tightly coupled GPU cluster for training."""

    kind: Literal["TrainingCluster"]
    purpose: Literal["pretraining", "fine_tuning", "hpc", "serving"] = "pretraining"
    placement: TrainingPlacement
    compute: Compute
    fabric: Fabric
    storage: list[Storage] = Field(default_factory=list)
    scheduler: Scheduler = Field(default_factory=Scheduler)
    training: TrainingWorkload | None = None
    access: Access = Field(default_factory=Access)
    hosts: Hosts | None = None
    extensions: Extensions = Field(default_factory=Extensions)

    @model_validator(mode="before")
    @classmethod
    def _default_image(cls, data: Any) -> Any:
        """Fill compute.image with the default image (spec.images.default_image) when unnamed."""
        if not isinstance(data, dict):
            return data
        compute = data.get("compute")
        if not isinstance(compute, dict) or compute.get("image") is not None:
            return data
        chosen = default_image(data)
        return data if chosen is None else {**data, "compute": {**compute, "image": chosen}}

    @model_validator(mode="after")
    def _lnet_on_prem_once_per_network(self) -> TrainingCluster:
        given = [s for s in self.storage if s.lnet is not None]
        if given and not spec_of(self.placement.provider).lnet:
            raise FieldError(
                "storage",
                f"storage {given[0].name!r}: lnet is for on-prem Lustre; the "
                f"{self.placement.provider} Lustre service is reached over tcp",
                "remove lnet",
            )
        seen: dict[str, str] = {}
        for item in given:
            assert item.lnet is not None
            net = lnet_network(item.lnet)
            if seen.setdefault(net, item.lnet) != item.lnet:
                raise FieldError(
                    "storage",
                    f"storage {item.name!r}: lnet {item.lnet!r} names network {net} with other "
                    f"interfaces than {seen[net]!r} (one networks= entry per LNet network)",
                    f"give every file system on {net} the same lnet: {seen[net]}",
                )
        return self

    @model_validator(mode="after")
    def _parallelism_divides_gpus(self) -> TrainingCluster:
        work = self.training
        gpu = self.compute.gpu
        if work is None or gpu is None or gpu.per_node == 0:
            return self
        per_node = gpu.per_node
        gpus = self.compute.nodes * per_node
        if work.tensor_parallel > per_node:
            raise FieldError(
                "training",
                f"tensor_parallel {work.tensor_parallel} is more than the {per_node} GPUs "
                "of a node (tensor parallelism stays on NVLink inside a node)",
                f"use tensor_parallel <= {per_node} and pipeline_parallel for the rest",
            )
        model_gpus = work.tensor_parallel * work.pipeline_parallel * work.context_parallel
        if gpus % model_gpus:
            product = "tensor_parallel x pipeline_parallel" + (
                " x context_parallel" if work.context_parallel > 1 else ""
            )
            raise FieldError(
                "training",
                f"{product} = {model_gpus} does not divide the cluster's {gpus} GPUs",
                "choose degrees whose product divides the GPU count",
            )
        return self

    @model_validator(mode="after")
    def _nodes_within_slurm_limit(self) -> TrainingCluster:
        if self.scheduler.kind != "slurm":
            return self
        version = self.scheduler.slurm_version
        limit = slurm.max_nodes(version)
        total = self.compute.total_nodes
        if limit is not None and total > limit:
            raise FieldError(
                "compute",
                f"{total} nodes exceed the {limit} that Slurm {version.release} accepts "
                "(MAX_SLURM_NODES; slurmctld stops with 'Attempting to create nodes past "
                "max node limit')",
                f"split the cluster, or declare a release without that cap: {_uncapped()}",
            )
        return self


def _uncapped() -> str:
    return ", ".join(
        r for r in slurm.supported_releases() if slurm.max_nodes(slurm.parse_version(r)) is None
    )

"""The InferenceFleet blueprint: loosely coupled Kubernetes GPU pools across regions."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from archform.spec import engines
from archform.spec.errors import FieldError, HintedError
from archform.spec.models.common import (
    CloudProvider,
    Count,
    DocumentBase,
    Gpu,
    InstanceType,
    Ipv4Cidr,
    RaisedQuotas,
    Region,
    StorageUri,
    Strict,
)
from archform.spec.open_models import fill_from_named
from archform.spec.provider import field_doc, names_where


class FleetNetwork(Strict):
    """Every range the fleet's networks use; validate refuses any two that overlap.

    See spec/networks.py. Defaults that are None depend on the provider.
    """

    cidr: Ipv4Cidr = Field(
        default="10.100.0.0/14",
        description="Region i's network is the i-th /16 of this block (node subnets and, "
        "on GKE, the pod and Service ranges are carved from it).",
    )
    service_cidr: Ipv4Cidr | None = Field(
        default=None,
        description=field_doc("network.service_cidr", "Kubernetes Service range of every cluster."),
    )
    pod_cidr: Ipv4Cidr | None = Field(
        default=None,
        description=field_doc("network.pod_cidr", "The pod range of every cluster."),
    )
    control_plane_cidr: Ipv4Cidr | None = Field(
        default=None,
        description=field_doc("network.control_plane_cidr", ""),
    )


class FleetPlacement(Strict):
    """Regions the fleet serves from (one Kubernetes cluster per region)."""

    provider: CloudProvider
    regions: list[Region] | None = None
    region: Region | None = Field(default=None, description="Shorthand for one region.")
    network: FleetNetwork = Field(default_factory=FleetNetwork)
    quotas: RaisedQuotas = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_region_field(self) -> FleetPlacement:
        if self.region is None and self.regions is None:
            raise HintedError("give `regions` (or `region`)", "add regions: [us-east-1, eu-west-1]")
        if self.region is not None and self.regions is not None:
            raise FieldError(
                "region", "give exactly one of `regions` or `region`, not both", "keep `regions`"
            )
        if self.regions is not None and not self.regions:
            raise FieldError("regions", "`regions` must not be empty", "name at least one region")
        if self.regions is not None and len(set(self.regions)) != len(self.regions):
            raise FieldError("regions", "`regions` lists a region twice", "list each region once")
        return self

    @property
    def all_regions(self) -> tuple[str, ...]:
        """Every region, in the order written."""
        return tuple(self.regions) if self.regions is not None else (str(self.region),)


def _listed(names: tuple[str, ...]) -> str:
    """'aws and gcp'."""
    return " and ".join((", ".join(names[:-1]), names[-1])) if len(names) > 1 else "".join(names)


def _params_from_base(schema: dict[str, Any]) -> None:
    required = schema.get("required")
    if isinstance(required, list) and "params" in required:
        required.remove("params")


class ServedModel(Strict):
    """The model served and where its weights live (the registry location)."""

    # `params` may come from `base` instead (filled before validation): the JSON Schema must
    # not require it.
    model_config = ConfigDict(**Strict.model_config, json_schema_extra=_params_from_base)

    @model_validator(mode="before")
    @classmethod
    def _named_shape(cls, data: Any) -> Any:
        return fill_from_named(
            data,
            "base",
            # MLA models (DeepSeek) fill the cache-equivalent shape: 1 latent head of
            # (kv_lora_rank + qk_rope_head_dim) / 2, so KV bytes per token come out right.
            {"layers": "layers", "kv_heads": "cache_kv_heads", "head_dim": "cache_head_dim"},
            "params",
        )

    base: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")] | None = Field(
        default=None,
        description="The published model this one is (or is fine-tuned from), by name in "
        "archform's model table (archform/spec/data/open_models.yaml): fills params, "
        "layers, kv_heads and head_dim; lint reads its trained context and head counts.",
    )
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
    params: Count
    precision: Literal["bf16", "fp16", "fp8", "int8", "int4"] = "bf16"
    max_context_tokens: Annotated[int, Field(ge=128, le=10_000_000)] = 8192
    source: StorageUri = Field(description="The model registry location of the weights.")
    source_region: Region | None = Field(
        default=None, description="Region of `source` (default: the fleet's first region)."
    )
    source_account_id: str | None = Field(
        default=None,
        description=field_doc("model.source_account_id", ""),
    )
    replicate_to_regions: bool = Field(
        default=True,
        description="Copy the weights into a bucket in every serving region; pods pull in-region.",
    )
    layers: Annotated[int, Field(ge=1, le=1000)] | None = None
    kv_heads: Annotated[int, Field(ge=1, le=1024)] | None = None
    head_dim: Annotated[int, Field(ge=1, le=1024)] | None = None


def _engine_kind(value: Any) -> Any:
    """A registered engine kind (archform.spec.engines), refused as a choice otherwise."""
    known = engines.kinds()
    if isinstance(value, str) and value in known:
        return value
    quoted = [repr(k) for k in known]
    expected = ", ".join(quoted[:-1]) + f" or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
    raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})


# One of the registered engines; the schema lists the bundled ones.
EngineKind = Annotated[
    str,
    BeforeValidator(_engine_kind),
    WithJsonSchema({"enum": [e.kind for e in engines.BUNDLED], "type": "string"}),
]


class Server(Strict):
    """The model server run in each pod."""

    kind: EngineKind = engines.DEFAULT_KIND
    image: (
        Annotated[
            str,
            Field(
                pattern=r"^[a-z0-9][a-z0-9./_-]{0,200}(:[A-Za-z0-9._-]{1,128})?(@sha256:[a-f0-9]{64})?$",
                description="Container image pinned by tag or digest; vllm, tgi and triton "
                "default to a pinned image, NIM images are per model, sglang has no default",
            ),
        ]
        | None
    ) = None
    tensor_parallel: Annotated[int, Field(ge=1, le=64)] = 1
    port: Annotated[int, Field(ge=1024, le=65535)] = 8000
    load_time_seconds: Annotated[int, Field(ge=10, le=7200)] = Field(
        default=600, description="Expected model load time; sizes the startup probe."
    )

    @model_validator(mode="after")
    def _has_image(self) -> Server:
        if self.image is None:
            raise FieldError(
                "image",
                f"server kind {self.kind} has no default image: give server.image",
                engines.engine(self.kind).image_note,
            )
        return self

    @property
    def container_image(self) -> str:
        """The image (always set once loaded: defaulted per kind or given)."""
        assert self.image is not None
        return self.image


class GpuPool(Strict):
    """The GPU node pool in each region."""

    instance_type: InstanceType
    gpu: Gpu | None = None
    purchase: Literal["spot", "on_demand", "reserved"] = "on_demand"
    on_demand_floor_per_region: Annotated[int, Field(ge=0, le=10_000)] = 0
    fabric: Literal["infiniband", "efa", "roce", "ethernet"] = "ethernet"
    min_nodes_per_region: Annotated[int, Field(ge=0, le=10_000)]
    max_nodes_per_region: Annotated[int, Field(ge=1, le=10_000)]

    @model_validator(mode="after")
    def _bounds(self) -> GpuPool:
        if self.min_nodes_per_region > self.max_nodes_per_region:
            raise FieldError(
                "min_nodes_per_region",
                f"min_nodes_per_region ({self.min_nodes_per_region}) exceeds "
                f"max_nodes_per_region ({self.max_nodes_per_region})",
                "raise max_nodes_per_region or lower min_nodes_per_region",
            )
        return self


class SystemPool(Strict):
    """CPU nodes for everything that is not the model server."""

    instance_type: InstanceType
    nodes_per_region: Annotated[int, Field(ge=1, le=1000)] = 2


class Autoscaling(Strict):
    """What the autoscaler watches and the per-replica target."""

    metric: Literal["queue_depth", "requests_per_second", "kv_cache_usage", "gpu_utilization"]
    target: Annotated[float, Field(gt=0, le=1_000_000)]


class Traffic(Strict):
    """Expected load and latency target."""

    peak_rps: Annotated[float, Field(gt=0, le=100_000_000)]
    p99_latency_ms: Annotated[int, Field(ge=1, le=600_000)]
    global_load_balancer: bool = True
    tokens_per_request: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        default=256, description="Mean generated tokens per request (sizing assumption)."
    )
    prompt_tokens_per_request: Annotated[int, Field(ge=1, le=10_000_000)] = Field(
        default=1024,
        description="Mean prompt tokens per request: prefill work (sizing assumption).",
    )


class DeployerAccess(Strict):
    """How the machine running `pulumi up` reaches every cluster's API on the first deploy.

    The program that creates the clusters also installs into them, so the deployer must
    reach each API before anything exists inside the new networks. Either the clusters'
    networks are connected to the deployer's (`network`; `cidrs` are then the deployer's
    private addresses, which `api_access_cidrs` must admit), or the public endpoint is opened
    to the deployer's public egress only (`cidrs` alone, for the bootstrap).
    """

    network: str | dict[Region, str] | None = Field(
        default=None,
        description=field_doc(
            "deployer.network", "The deployer's network to connect each cluster network to."
        ),
    )
    cidrs: list[Ipv4Cidr] = Field(
        default_factory=list,
        description="The deployer's addresses: private ranges inside `network`, or, without "
        "a network, the public egress CIDRs the API endpoint is opened to.",
    )


class MaintenanceWindow(Strict):
    """When the managed service may upgrade the control plane and nodes (GKE, AKS).

    One weekly window in UTC. GKE needs at least 48 hours of availability in any 32 days
    in windows of at least 4 hours
    (https://cloud.google.com/kubernetes-engine/docs/maintenance-window), which a weekly
    window meets from 12 hours (a 32-day span holds 4 of them); AKS planned maintenance
    windows last 4 to 24 hours
    (https://learn.microsoft.com/azure/aks/planned-maintenance). EKS has no windows: it
    upgrades only what you ask for (or a version past extended support).
    """

    day: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] = (
        "sunday"
    )
    start_utc: Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")] = Field(
        default="00:00", description='Start of the window, "HH:MM" in UTC.'
    )
    hours: Annotated[int, Field(ge=12, le=24)] = Field(
        default=12, description="Length of the window (GKE needs >= 12 weekly, AKS <= 24)."
    )


class KubernetesSettings(Strict):
    """Kubernetes version and who may reach the API server."""

    version: Annotated[
        str,
        Field(
            pattern=r"^1\.\d{2}$",
            description='Quoted: "1.36". Lint rule INF011 checks it against the provider\'s '
            "support calendar.",
        ),
    ] = "1.36"
    api_access_cidrs: list[Ipv4Cidr] = Field(default_factory=list)
    deployer: DeployerAccess | None = Field(
        default=None,
        description="How `pulumi up` reaches a private API. Without it (and without the "
        "fleet program's deployerCidrs stack config) a fleet whose api_access_cidrs are all "
        "private has no way in, and its program refuses to start.",
    )
    maintenance_window: MaintenanceWindow = Field(
        default_factory=MaintenanceWindow,
        description="Weekly UTC window for automatic upgrades on GKE and AKS "
        "(default Sunday 00:00, 12 h).",
    )


# A fully qualified domain name of at most 253 characters, lowercase labels.
Fqdn = Annotated[
    str,
    Field(
        min_length=4,
        max_length=253,
        pattern=r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$",
        description="A fully qualified domain name, lowercase (api.example.com).",
    ),
]


class Edge(Strict):
    """How clients reach the fleet: TLS and authentication at its entry point.

    The public entry point (`traffic.global_load_balancer`: Global Accelerator, the GKE
    multi-cluster Gateway, Front Door) serves HTTPS only by default; plain HTTP is an
    explicit opt-in (`protocol: http`) that lint rule SEC004 reports. Every request under
    the server's API is checked for a bearer key (`auth: api_key`, default), wherever the
    fleet is reached from.
    """

    protocol: Literal["https", "http"] = Field(
        default="https",
        description="https (default): TLS at the public entry point with a managed "
        "certificate. http: plain HTTP, only as an explicit opt-in (lint SEC004).",
    )
    domain: Fqdn | None = Field(
        default=None,
        description=field_doc(
            "edge.domain",
            "The name clients use; its managed certificate is issued for it. Needed for https "
            "on " + _listed(names_where(lambda s: s.fleets and not s.edge_has_own_name)) + ".",
        ),
    )
    auth: Literal["api_key", "none"] = Field(
        default="api_key",
        description="api_key (default): the server requires `Authorization: Bearer <key>` "
        "on its API; the key lives in a Kubernetes Secret the program creates from the "
        "`apiKey` secret stack config or generates once. none: no authentication.",
    )


class InferenceFleet(DocumentBase):
    """An autoscaled, multi-region model-serving fleet."""

    kind: Literal["InferenceFleet"]
    placement: FleetPlacement
    model: ServedModel
    server: Server
    gpu_pool: GpuPool
    system_pool: SystemPool | None = None
    autoscaling: Autoscaling | None = None
    traffic: Traffic | None = None
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)
    edge: Edge = Field(
        default_factory=Edge,
        description="TLS and authentication at the fleet's entry point (default: HTTPS "
        "only, API key required).",
    )

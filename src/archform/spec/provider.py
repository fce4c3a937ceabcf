"""What the spec layer asks of a provider: `ProviderSpec`, found by name in the registry.

Each provider package's `spec.py` defines ``SPEC``, an object of this Protocol (most
subclass `SpecBase`, whose defaults refuse or leave out every optional feature). Shared
spec code reads these members and never a provider's name; a provider that lacks a
feature refuses it at the blueprint line through the same checks (validate, buildable).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from archform import providers

if TYPE_CHECKING:
    from archform.spec.catalog import Catalog
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster
    from archform.spec.networks import Block, RegionNetworks, SizeProblem
    from archform.spec.paths import Loc

# `add(loc, message, hint, prefer)`: report one problem at a blueprint field.
Add = Callable[["Loc", str, str, str], None]


@runtime_checkable
class ProviderSpec(Protocol):
    """Blueprint-level facts and checks of one provider (read-only members)."""

    @property
    def name(self) -> str:
        """The package name, as blueprints write it."""
        ...

    @property
    def label(self) -> str:
        """How the provider is written in prose ("AWS")."""
        ...

    @property
    def article(self) -> str:
        """The indefinite article before the label ("an")."""
        ...

    @property
    def cloud(self) -> bool:
        """True: archform provisions the machines; False: a site the blueprint lists.

        A cloud has catalog instance types, regions and a Pulumi program; a site's blueprint
        lists its hosts and fabric.
        """
        ...

    @property
    def fleets(self) -> bool:
        """InferenceFleets can be placed here (the schema's fleet `placement.provider`)."""
        ...

    @property
    def registry_scheme(self) -> str | None:
        """URI scheme of a Platform's model registry object store; None: no registry."""
        ...

    @property
    def nvme_unit_bytes(self) -> int:
        """Bytes in the unit the provider quotes instance-local NVMe in (GB or GiB)."""
        ...

    @property
    def lnet(self) -> bool:
        """Lustre over LNet addresses (`storage[].lnet`) apply here."""
        ...

    @property
    def filestore(self) -> bool:
        """Filestore tiers (`storage[].filestore_tier`) apply here."""
        ...

    @property
    def example_instance(self) -> str | None:
        """An instance type for "needs instance_type" hints (None: not a cloud)."""
        ...

    @property
    def example_small_gpu(self) -> str | None:
        """A small GPU type for "a gpu_pool needs GPU nodes" hints."""
        ...

    @property
    def training_subnets(self) -> int:
        """Subnets the training program carves out of placement.network.cidr."""
        ...

    @property
    def static_compute_hosts(self) -> bool:
        """Each compute node gets a static address in the first subnet."""
        ...

    @property
    def host_room_checked(self) -> bool:
        """The first subnet must hold every host number archform assigns."""
        ...

    @property
    def existing_network_refusal(self) -> str | None:
        """Why an existing network cannot be reused (None: it can)."""
        ...

    @property
    def existing_network_needs_subnets(self) -> bool:
        """Reusing a network needs the subnet ids too."""
        ...

    @property
    def lustre_scratch(self) -> bool:
        """The Lustre service has a scratch deployment."""
        ...

    @property
    def lustre_source(self) -> tuple[str, str] | None:
        """The one URI scheme a linked Lustre source may use, and the words for it."""
        ...

    @property
    def edge_has_own_name(self) -> bool:
        """The public entry point has a certified name of its own (no edge.domain)."""
        ...

    @property
    def zones_per_instance(self) -> bool:
        """Zones are checked per instance type (the zone offer table)."""
        ...

    @property
    def deployer_network(self) -> tuple[re.Pattern[str], str] | None:
        """`kubernetes.deployer.network`: its id form and an example (None: no hook)."""
        ...

    @property
    def deployer_network_regional(self) -> bool:
        """One deployer network id per region (else one global id)."""
        ...

    @property
    def service_cidr(self) -> str | None:
        """Default Kubernetes Service range of a fleet (None: the platform picks)."""
        ...

    @property
    def pod_cidr(self) -> str | None:
        """Default pod range of a fleet (None: pods use the node subnets)."""
        ...

    @property
    def control_plane_cidr(self) -> str | None:
        """Default block of the managed control planes (None: not carved)."""
        ...

    @property
    def network_fields(self) -> frozenset[str]:
        """The placement.network fields this provider reads."""
        ...

    @property
    def unused_network_fields(self) -> Mapping[str, str]:
        """Why a network field is not used here (field -> reason), for hints."""
        ...

    @property
    def placement_mechanism(self) -> str | None:
        """What co-locates a cloud cluster's nodes (None: placement is physical)."""
        ...

    @property
    def reservation_places(self) -> bool:
        """A targeted reservation already places its nodes (they stay out of the group)."""
        ...

    @property
    def promote_store(self) -> str | None:
        """The object store `archform promote` writes a registry to (None: no promotion)."""
        ...

    @property
    def registry_region_key(self) -> str | None:
        """The Pulumi config key of a registry program's region, set by deploy."""
        ...

    @property
    def sdk_extra(self) -> str | None:
        """Archform's install extra that brings the provider's Pulumi SDK."""
        ...

    @property
    def vendor(self) -> str:
        """Who sets the provider's quotas, as its documentation names itself ("AWS")."""
        ...

    @property
    def product_kinds(self) -> Mapping[str, str]:
        """Product names of this provider users write for a generic kind ("efs": "nfs")."""
        ...

    @property
    def field_docs(self) -> Mapping[str, str]:
        """What a blueprint field means here ("network.cidr": "the VPC ..."), for the schema."""
        ...

    @property
    def skypilot_cloud(self) -> str | None:
        """How SkyPilot's `resources.cloud` names this provider (None: SkyPilot has none)."""
        ...

    @property
    def skypilot_accelerators(self) -> Mapping[str, tuple[str, str]]:
        """Accelerator names SkyPilot's catalog ties to one type: name -> (GPU, type)."""
        ...

    @property
    def api_access_rules_in_security_group(self) -> bool:
        """Each Kubernetes API access range is one inbound rule of a security group."""
        ...

    def training_blocks(self, cluster: TrainingCluster, catalog: Catalog) -> list[Block]:
        """Every range the training program creates."""
        ...

    def training_defaults(
        self, cluster: TrainingCluster, catalog: Catalog
    ) -> dict[str, str | None]:
        """placement.network fields the training program fills when unset: {field: CIDR}."""
        ...

    def fleet_region(self, block: str, index: int, control: str | None) -> RegionNetworks:
        """Fleet region `index`'s ranges, carved from its `block`."""
        ...

    def training_size_problems(
        self, cluster: TrainingCluster, catalog: Catalog
    ) -> list[SizeProblem]:
        """Provider-specific ranges too small for what the program carves."""
        ...

    def fleet_size_problems(self, fleet: InferenceFleet) -> list[SizeProblem]:
        """Provider-specific fleet ranges too small or not allowed."""
        ...

    def check_training(self, add: Add, catalog: Catalog, cluster: TrainingCluster) -> None:
        """Provider-specific reasons a training cluster cannot be built."""
        ...

    def check_fleet(self, add: Add, catalog: Catalog, fleet: InferenceFleet) -> None:
        """Provider-specific reasons a fleet cannot be built."""
        ...


@cache
def spec_of(name: str) -> ProviderSpec:
    """The spec part of provider `name` (its package's spec.SPEC)."""
    module = providers.part(name, "spec")
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, ProviderSpec) or spec.name != name:
        raise TypeError(f"archform/providers/{name}/spec.py must define SPEC: ProviderSpec")
    return spec


def spec_or_none(name: object) -> ProviderSpec | None:
    """The spec part of `name` when it names a provider (raw, unvalidated data may not)."""
    return spec_of(name) if isinstance(name, str) and name in providers.names() else None


def sdk_extras() -> tuple[str, ...]:
    """The install extras of the providers' Pulumi SDKs, in list order (each has `pulumi`)."""
    return tuple(e for n in providers.names() if (e := spec_of(n).sdk_extra) is not None)


def names() -> tuple[str, ...]:
    """Every provider, in the order lists show them."""
    return providers.names()


def field_doc(field: str, lead: str) -> str:
    """A schema description: `lead`, then what each provider says of `field` in list order.

    A provider's words are its `field_docs[field]`, or for a `network.<name>` field it does
    not read, "not used (<why>)" from its `unused_network_fields`. One provider alone:
    "gcp only: ...".
    """
    said: list[tuple[str, str]] = []
    for name in providers.names():
        spec = spec_of(name)
        text = spec.field_docs.get(field)
        leaf = field.removeprefix("network.")
        if text is None and leaf != field and leaf in spec.unused_network_fields:
            text = f"not used ({spec.unused_network_fields[leaf]})"
        if text is not None:
            said.append((name, text))
    if len(said) == 1:
        parts = f"{said[0][0]} only: {said[0][1]}"
    else:
        parts = "; ".join(f"{name}: {text}" for name, text in said)
    return " ".join(p for p in (lead, parts + "." if parts else "") if p)


def names_where(test: Callable[[ProviderSpec], bool]) -> tuple[str, ...]:
    """The providers whose spec part passes `test`, in list order."""
    return tuple(n for n in providers.names() if test(spec_of(n)))

"""`SpecBase`: a provider spec part that implements no optional feature.

A provider package subclasses it and sets what it has; every default leaves a feature out,
so the shared checks refuse it at the blueprint line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from archform.spec.networks import Block, RegionNetworks, SizeProblem

if TYPE_CHECKING:
    from archform.spec.catalog import Catalog
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster
    from archform.spec.provider import Add


class SpecBase:
    """Defaults of `ProviderSpec`: a site whose hosts the blueprint lists, nothing more."""

    name: str = ""
    label: str = ""
    article: str = "a"
    cloud: bool = False
    fleets: bool = False
    registry_scheme: str | None = None
    nvme_unit_bytes: int = 2**30
    lnet: bool = False
    filestore: bool = False
    example_instance: str | None = None
    example_small_gpu: str | None = None
    training_subnets: int = 1
    static_compute_hosts: bool = False
    host_room_checked: bool = False
    existing_network_refusal: str | None = None
    existing_network_needs_subnets: bool = False
    lustre_scratch: bool = False
    lustre_source: tuple[str, str] | None = None
    edge_has_own_name: bool = False
    zones_per_instance: bool = False
    deployer_network: tuple[re.Pattern[str], str] | None = None
    deployer_network_regional: bool = False
    service_cidr: str | None = None
    pod_cidr: str | None = None
    control_plane_cidr: str | None = None
    network_fields: frozenset[str] = frozenset()
    unused_network_fields: Mapping[str, str] = MappingProxyType({})
    placement_mechanism: str | None = None
    reservation_places: bool = False
    promote_store: str | None = None
    registry_region_key: str | None = None
    sdk_extra: str | None = None
    vendor: str = ""
    api_access_rules_in_security_group: bool = False
    product_kinds: Mapping[str, str] = MappingProxyType({})
    field_docs: Mapping[str, str] = MappingProxyType({})
    skypilot_cloud: str | None = None
    skypilot_accelerators: Mapping[str, tuple[str, str]] = MappingProxyType({})

    def training_blocks(self, cluster: TrainingCluster, catalog: Catalog) -> list[Block]:
        """No ranges of archform's own (the site's network is the user's)."""
        return []

    def training_defaults(
        self, cluster: TrainingCluster, catalog: Catalog
    ) -> dict[str, str | None]:
        """No network field filled by default."""
        return {}

    def fleet_region(self, block: str, index: int, control: str | None) -> RegionNetworks:
        """Not reached: a provider without fleets is refused by the schema."""
        raise NotImplementedError(f"{self.name} has no inference fleets")

    def training_size_problems(
        self, cluster: TrainingCluster, catalog: Catalog
    ) -> list[SizeProblem]:
        """No provider-specific range sizes."""
        return []

    def fleet_size_problems(self, fleet: InferenceFleet) -> list[SizeProblem]:
        """No provider-specific range sizes."""
        return []

    def check_training(self, add: Add, catalog: Catalog, cluster: TrainingCluster) -> None:
        """No provider-specific checks."""

    def check_fleet(self, add: Add, catalog: Catalog, fleet: InferenceFleet) -> None:
        """No provider-specific checks."""

"""`FleetBase`: the defaults of `FleetProvider`, one node type per pool, no global entry."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archform.render.targets.kubernetes.records import FleetView, RegionView


class FleetBase:
    """A provider subclasses this and overrides what its fleets do differently."""

    spot_shapes: bool = False
    kubelet_on_nvme: bool = False
    per_region_identity: bool = False
    accelerator_label: bool = False
    stage_scratch_copy: bool = False
    stage_pod_labels: Mapping[str, str] = MappingProxyType({})
    spot_tolerations: tuple[Mapping[str, str], ...] = ()
    tls_at_service: bool = False
    origin_header_check: bool = False

    def replica_bucket(self, fleet: str, region: str, digest: str) -> str:
        """`<fleet>-<region>-<digest>` (bucket names are global across customers)."""
        return f"{fleet[:30]}-{region}-{digest}"

    def region_objects(self, v: FleetView, region: RegionView) -> list[dict[str, Any]]:
        """No objects beyond the shared ones."""
        return []

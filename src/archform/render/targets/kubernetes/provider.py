"""What an InferenceFleet's targets ask of a provider: `FleetProvider`, found by name.

Each provider with fleets has `render/fleet.py` in its package defining ``FLEET`` (most
subclass `FleetBase`). The fleet view, the Kubernetes objects and the weight copies read
these members and never a provider's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from archform import providers

if TYPE_CHECKING:
    from archform.render.targets.kubernetes.records import FleetView, RegionView


@runtime_checkable
class FleetProvider(Protocol):
    """How a provider's fleet differs: node pools, weight copies, exposure, identity."""

    @property
    def spot_shapes(self) -> bool:
        """A spot node group takes several instance types of the same shape."""
        ...

    @property
    def kubelet_on_nvme(self) -> bool:
        """The node image can put kubelet and containerd on the instance-local NVMe."""
        ...

    @property
    def per_region_identity(self) -> bool:
        """Service accounts are named per region (workload identities span the project)."""
        ...

    @property
    def accelerator_label(self) -> bool:
        """Node pools name their accelerator type (the view's `accelerator`)."""
        ...

    @property
    def stage_scratch_copy(self) -> bool:
        """The stage Job downloads a scratch copy of the weights before it uploads them."""
        ...

    @property
    def stage_pod_labels(self) -> Mapping[str, str]:
        """Labels the stage Job's pod needs for its cloud identity."""
        ...

    @property
    def spot_tolerations(self) -> tuple[Mapping[str, str], ...]:
        """Tolerations model servers need to run on the provider's spot nodes."""
        ...

    @property
    def tls_at_service(self) -> bool:
        """TLS ends at the regional Service's load balancer (else at the global entry)."""
        ...

    @property
    def origin_header_check(self) -> bool:
        """The global entry point stamps a header the server checks (public fleets)."""
        ...

    def replica_bucket(self, fleet: str, region: str, digest: str) -> str:
        """Name of a region's replica bucket from the fleet, region and a stable digest."""
        ...

    def service_exposure(self, v: FleetView) -> tuple[str, dict[str, str]]:
        """The Service type and annotations that expose the servers of one region."""
        ...

    def fetch_command(self, uri: str) -> str:
        """Shell lines that copy the in-region weights at `uri` to /models/weights."""
        ...

    def stage_commands(self, source: str, dest: str, regions: tuple[str, str]) -> tuple[str, str]:
        """(head, body) shell lines of the stage Job: fetch the checksums, copy the rest."""
        ...

    def region_objects(self, v: FleetView, region: RegionView) -> list[dict[str, Any]]:
        """Objects of the provider's global entry point in one region (beside the Service)."""
        ...


@cache
def fleet_of(name: str) -> FleetProvider:
    """The fleet part of provider `name` (its package's render.fleet.FLEET)."""
    part = getattr(providers.part(name, "render"), "FLEET", None)
    if not isinstance(part, FleetProvider):
        raise TypeError(f"archform/providers/{name}/render has no FLEET: FleetProvider")
    return part

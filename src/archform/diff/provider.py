"""What change impact asks of a provider: `ProviderDiff`, found by name in the registry.

Each provider package's `diff.py` defines ``DIFF`` (most subclass `DiffBase`). The policy
rows and refinements (diff.refine, diff.placement) read these members and never a
provider's name. Blueprints under diff are raw data, so a name that is no provider gets
None and the row's own verdict stands.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from archform import providers

if TYPE_CHECKING:
    from archform.diff.changes import Edit
    from archform.diff.impact import Impact

    Verdict = tuple[Impact, str]


@runtime_checkable
class ProviderDiff(Protocol):
    """How a provider's generated programs take a change."""

    @property
    def elastic_nfs(self) -> bool:
        """The managed NFS service is elastic: capacity down is a figure, not a new disk."""
        ...

    @property
    def lustre_grows(self) -> bool:
        """The managed Lustre service grows in place."""
        ...

    @property
    def node_pool(self) -> str:
        """What a fleet's node pool is called here ("managed node group")."""
        ...

    @property
    def kubernetes_upgrade(self) -> str | None:
        """How a minor Kubernetes upgrade proceeds (None: the generic words)."""
        ...

    @property
    def api_flip_in_place(self) -> str | None:
        """Who updates the API endpoint in place on a private/public flip."""
        ...

    @property
    def api_flip_recreates(self) -> str | None:
        """Why a private/public flip recreates the clusters ({to}: the new exposure)."""
        ...

    @property
    def node_count_in_place(self) -> str | None:
        """Why a node-count change is in place here (None: no verdict)."""
        ...

    def node_change(self, edit: Edit) -> Verdict | None:
        """A node-count or node-group change that disturbs running nodes (None: it does not)."""
        ...

    def colocation(self, edit: Edit) -> Verdict | None:
        """What the generated program does when `placement.colocation` changes."""
        ...


@cache
def _diff_of(name: str) -> ProviderDiff | None:
    part = getattr(providers.part(name, "diff"), "DIFF", None)
    if part is None:
        return None
    if not isinstance(part, ProviderDiff):
        raise TypeError(f"archform/providers/{name}/diff.py must define DIFF: ProviderDiff")
    return part


def diff_of(name: object) -> ProviderDiff | None:
    """The diff part of provider `name`; None for a name that is no provider, or no part."""
    if not isinstance(name, str) or name not in providers.names():
        return None
    return _diff_of(name)


def provider_of(root: dict[str, object]) -> str:
    """`placement.provider` of a raw blueprint ("" when absent)."""
    placement = root.get("placement")
    return str(placement.get("provider", "")) if isinstance(placement, dict) else ""

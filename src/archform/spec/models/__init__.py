"""Typed blueprint models (pydantic v2, frozen, unknown keys forbidden).

One module per kind. This package imports none of them: importing
`archform.spec.models.training` runs this file first, and a lint of a TrainingCluster must not
build the InferenceFleet models. The names below load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.platform import Platform
    from archform.spec.models.training import TrainingCluster

    Blueprint: TypeAlias = TrainingCluster | InferenceFleet | Platform

KINDS = ("TrainingCluster", "InferenceFleet", "Platform")

_MODULES = {
    "TrainingCluster": "archform.spec.models.training",
    "InferenceFleet": "archform.spec.models.inference",
    "Platform": "archform.spec.models.platform",
}

_ADAPTER: TypeAdapter[TrainingCluster | InferenceFleet | Platform] | None = None


def _blueprint() -> Any:
    from pydantic import Field

    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.platform import Platform
    from archform.spec.models.training import TrainingCluster

    return Annotated[TrainingCluster | InferenceFleet | Platform, Field(discriminator="kind")]


def blueprint_adapter() -> TypeAdapter[TrainingCluster | InferenceFleet | Platform]:
    """The (cached) validator for one blueprint document of any kind (JSON schema, tests)."""
    global _ADAPTER
    if _ADAPTER is None:
        from pydantic import TypeAdapter

        _ADAPTER = TypeAdapter(_blueprint())
    return _ADAPTER


def __getattr__(name: str) -> Any:
    if name == "Blueprint":
        return _blueprint()
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "KINDS",
    "Blueprint",
    "InferenceFleet",
    "Platform",
    "TrainingCluster",
    "blueprint_adapter",
]

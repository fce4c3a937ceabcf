"""Typed blueprint models (pydantic v2, frozen, unknown keys forbidden)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, TypeAdapter

from archform.spec.models.inference import InferenceFleet
from archform.spec.models.platform import Platform
from archform.spec.models.training import TrainingCluster

Blueprint = Annotated[TrainingCluster | InferenceFleet | Platform, Field(discriminator="kind")]
KINDS = ("TrainingCluster", "InferenceFleet", "Platform")

_ADAPTER: TypeAdapter[TrainingCluster | InferenceFleet | Platform] | None = None


def blueprint_adapter() -> TypeAdapter[TrainingCluster | InferenceFleet | Platform]:
    """The (cached) validator for one blueprint document."""
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = TypeAdapter(Blueprint)
    return _ADAPTER


__all__ = [
    "KINDS",
    "Blueprint",
    "InferenceFleet",
    "Platform",
    "TrainingCluster",
    "blueprint_adapter",
]

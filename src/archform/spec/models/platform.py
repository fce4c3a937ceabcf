"""The Platform blueprint: the two-tier architecture joined by a model registry."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from archform.spec.models.common import CloudProvider, DnsName, DocumentBase, Region, Strict


class Registry(Strict):
    """Where trained weights are published for serving."""

    provider: CloudProvider
    region: Region
    bucket: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")]


class Promotion(Strict):
    """How a checkpoint becomes the served version."""

    approval: Literal["manual", "automatic"] = "manual"


class Platform(DocumentBase):
    """Training tier + serving tier + the registry between them."""

    kind: Literal["Platform"]
    training: DnsName = Field(description="Name of a TrainingCluster document.")
    inference: DnsName = Field(description="Name of an InferenceFleet document.")
    registry: Registry
    promotion: Promotion = Field(default_factory=Promotion)

"""What a rule sees: the validated blueprint set, the catalog, today, suppression state."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from archform.spec.catalog import Catalog, load_catalog
from archform.spec.document import BlueprintSet, Document
from archform.spec.paths import Loc

if TYPE_CHECKING:  # a kind's models are imported by the loader when a document of it is read
    from archform.spec.models.common import Suppression
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.platform import Platform
    from archform.spec.models.training import TrainingCluster

M = TypeVar("M", "TrainingCluster", "InferenceFleet", "Platform")

RDMA_FABRICS = frozenset({"infiniband", "roce", "efa"})


@dataclass(frozen=True, slots=True)
class SuppressionState:
    """One `lint.ignore` entry after the model rules ran."""

    doc: Document
    index: int
    entry: Suppression
    expired: bool
    used: int
    judged: bool  # the suppressed rule ran (or is unknown), so `used` is meaningful
    known: bool


@dataclass
class RuleContext:
    """Everything rules may read. Rules are pure functions of it."""

    blueprints: BlueprintSet
    today: dt.date
    catalog: Catalog = field(default_factory=load_catalog)
    suppressions: list[SuppressionState] = field(default_factory=list)

    def documents(self, kind: type[M]) -> Iterator[tuple[Document, M]]:
        """(document, model) pairs of one kind, in load order."""
        for doc in self.blueprints.documents:
            if isinstance(doc.model, kind):
                yield doc, doc.model

    def training(self) -> Iterator[tuple[Document, TrainingCluster]]:
        """Training clusters that actually train on GPUs (not `purpose: serving`)."""
        for doc in self.blueprints.documents:
            tc = doc.model
            if (
                tc.kind == "TrainingCluster"
                and tc.purpose != "serving"
                and tc.compute.total_gpus > 0
            ):
                yield doc, tc

    def fleets(self) -> Iterator[tuple[Document, InferenceFleet]]:
        """Inference fleets."""
        for doc in self.blueprints.documents:
            fleet = doc.model
            if fleet.kind == "InferenceFleet":
                yield doc, fleet

    @staticmethod
    def written(doc: Document, loc: Loc) -> bool:
        """True when `loc` is written in the file (not a default)."""
        return loc in doc.source.keys

    @staticmethod
    def first_written(doc: Document, *locs: Loc) -> Loc:
        """The first of `locs` written in the file (else the last one)."""
        for loc in locs:
            if loc in doc.source.keys:
                return loc
        return locs[-1]

"""Loaded documents and the set of documents a command works on."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias

from archform.spec.errors import Pos
from archform.spec.paths import Loc

if TYPE_CHECKING:
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.platform import Platform
    from archform.spec.models.training import TrainingCluster
    from archform.spec.peers.mapper import PeerInfo
    from archform.spec.source import SourceMap

    Model: TypeAlias = TrainingCluster | InferenceFleet | Platform


def __getattr__(name: str) -> Any:
    """`Model` (the union of the three kinds) is built on first use: it imports every model."""
    if name == "Model":
        from archform.spec.models.inference import InferenceFleet
        from archform.spec.models.platform import Platform
        from archform.spec.models.training import TrainingCluster

        return TrainingCluster | InferenceFleet | Platform
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, slots=True)
class Document:
    """One validated blueprint document with its source positions."""

    file: str
    index: int
    model: Model
    source: SourceMap
    raw: dict[str, Any]
    peer: PeerInfo | None = None  # set when the file is another tool's (spec.peers)

    @property
    def name(self) -> str:
        """The document's `name`."""
        return self.model.name

    @property
    def kind(self) -> str:
        """The document's `kind`."""
        return self.model.kind

    def locate(self, loc: Loc, *, prefer: str = "key") -> Pos:
        """Source position of a spec location (nearest ancestor if not written)."""
        return self.source.locate(loc, prefer=prefer)


@dataclass(frozen=True)
class BlueprintSet:
    """All documents loaded together; Platform references resolve within it."""

    documents: tuple[Document, ...]
    texts: dict[str, str]

    @cached_property
    def by_name(self) -> dict[str, Document]:
        """Documents keyed by name."""
        return {d.name: d for d in self.documents}

    def of_kind(self, kind: type[Model]) -> list[Document]:
        """Documents whose model is of the given class, in load order."""
        return [d for d in self.documents if isinstance(d.model, kind)]

    def lines(self, file: str) -> list[str]:
        """Source lines of a file (for code frames)."""
        return self.texts.get(file, "").splitlines()

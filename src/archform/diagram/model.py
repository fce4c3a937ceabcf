"""A renderer-neutral architecture graph: nested groups of labelled nodes, and edges.

Text in the graph is plain, unescaped user-facing text; each renderer escapes it for its own
syntax. Ids are safe identifiers (`[A-Za-z0-9_]`, prefixed) made by `Ids`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Shape = Literal["box", "db", "round"]
EdgeStyle = Literal["solid", "dotted", "thick"]


@dataclass(frozen=True, slots=True)
class Node:
    """A box with one or more lines of text."""

    id: str
    lines: tuple[str, ...]
    shape: Shape = "box"


@dataclass(slots=True)
class Group:
    """A titled container of nodes and further groups (a Mermaid subgraph)."""

    id: str
    title: tuple[str, ...]
    nodes: list[Node] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)

    def walk_nodes(self) -> list[Node]:
        """Every node in this group and below, in order."""
        out = list(self.nodes)
        for group in self.groups:
            out += group.walk_nodes()
        return out


@dataclass(frozen=True, slots=True)
class Edge:
    """A directed connection between two nodes, optionally labelled."""

    src: str
    dst: str
    label: str | None = None
    style: EdgeStyle = "solid"


@dataclass(slots=True)
class Diagram:
    """Top-level groups (drawn as columns, left to right) and the edges between nodes."""

    title: str
    groups: list[Group] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)


class Ids:
    """Makes unique, safe identifiers from arbitrary parts."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def make(self, prefix: str, *parts: str) -> str:
        """``prefix_part_part``, with anything but letters and digits turned into ``_``."""
        base = "_".join([prefix, *(re.sub(r"[^A-Za-z0-9]+", "_", p).strip("_") for p in parts)])
        candidate, n = base, 2
        while candidate in self._used:
            candidate = f"{base}_{n}"
            n += 1
        self._used.add(candidate)
        return candidate

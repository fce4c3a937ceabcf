"""Peer formats: other tools' cluster files read as archform blueprints, positions kept.

A *peer file* is a file another tool owns (an AWS ParallelCluster 3 cluster config, a
SkyPilot task, a Cluster Toolkit blueprint). The loader (`spec.loader`) hands every parsed
YAML document that is not an archform blueprint to `translate`: when a registered reader
claims it, the reader maps the peer's keys onto archform's blueprint data, and the result
is validated exactly like a blueprint. Every mapped value keeps the position of the peer
key it came from, so every finding (lint text/JSON/SARIF/GitHub/JUnit, validate errors,
`--diff-base`) lands at the peer file's own line:col, and the file's own text is what code
frames and SARIF regions show.

What a reader cannot map is never dropped: `Mapper.unmapped` records a note, reported once
per key as an `info` finding by lint rule LNT003 (peer-key-not-mapped); `Mapper.warn`
records a `warning` note (for what the file leaves unknowable offline, e.g. which zone a
subnet is in). A key the peer's own schema does not have is an error in the peer's own
words at its line (exit 2), like the tool's own schema validation.

How to add a reader
===================
1. Write one module exposing the interface below: `archform/providers/<provider>/peers/<name>.py`
   for a tool of one cloud (AWS ParallelCluster, Cluster Toolkit), else
   `archform/spec/peers/<name>.py` (SkyPilot, which names its cloud per task)::

       NAME = "skypilot"                      # short id, used in messages and `import`
       TITLE = "SkyPilot task YAML"           # shown to users
       DOCS = "https://docs.skypilot.co/..."  # the peer's public schema documentation

       def sniff(text: str) -> bool:
           '''Cheap, line-based: might this file be one of mine? (discovery by content;
           must be true for a broken file of the format too, so its error is shown)'''

       def claims(data: object) -> bool:
           '''Is this parsed YAML document (plain data) one of mine? Decide by content
           (top-level keys and their shapes), never by the file name.'''

       def read(m: Mapper) -> None:
           '''Map m.data (the peer document) onto archform data with m.put(...).'''

2. Register it (name -> module): in the provider's `peers/__init__.py` `READERS`, else in
   `SHARED_READERS` below; modules are imported on first use.
3. In `read`, for each peer key:
   - `m.keys(src, allowed)` at every peer mapping: an unknown key becomes the peer's own
     kind of error at its line (with a did-you-mean), collected, raised by the framework;
   - `m.get(src)` reads the peer value at a peer location (a tuple like
     `("Scheduling", "SlurmQueues", 0, "Name")`); `m.has(src)`, `m.pos(src)`;
     `m.expect(src, int, "an integer")` and `m.one_of(src, allowed)` check a value's type
     or enum in the peer's own words;
   - `m.put(dst, value, src)` writes archform data at `dst` (e.g. `("compute", "nodes")`),
     positioned at the peer key `src` (the key's line:col; its value's for value
     positions); list indices in `dst` are created in order (0, 1, ...);
   - `m.anchor(dst, src)` positions an archform container (`("compute",)`,
     `("storage", 0)`) at a peer key, for findings on the container itself;
   - `m.unmapped(src, why)` / `m.warn(src, why)` for what does not map, and
     `m.rest(src, mapped_keys, reasons)` to report every other key of a mapping at once;
   - `m.error(src, message, hint)` for a peer value archform cannot read (exit 2).
   - `m.at[src] = Pos(line, column)` positions a peer location inside a value (a flag in a
     `run` script: `("run", "--max-model-len")`), so what is put from it lands there.
   The archform document's `version`, `kind` and `name` are set by the framework
   (`m.kind`, default TrainingCluster; the name from the file name unless `m.name` is set).
4. Tests: at least 8 peer files under tests/spec/peers/<name>/ with `# must-not:` and
   `# expect: CODE` markers on the exact lines, checked by `assert_findings(path)` and
   `round_trip(path)` from tests/spec/peers/harness.py (see test_parallelcluster.py), and a
   docs page docs/peers/<name>.md (what maps, what does not, the peer's docs cited), linked
   from docs/peers/index.md and mkdocs.yml.

`archform import FILE -o out.yaml` writes `PeerInfo.mapped` (what the reader put, before
archform's catalog defaults) with `PeerInfo.origins` as comments and the notes as a list.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from functools import cache
from types import ModuleType
from typing import Any

from archform import providers
from archform.spec.errors import SpecProblem
from archform.spec.paths import parse_path
from archform.spec.peers.mapper import Mapper, Origin, PeerInfo, PeerNote
from archform.spec.source import RawDocument

__all__ = [
    "SHARED_READERS",
    "Mapper",
    "Origin",
    "PeerInfo",
    "PeerNote",
    "in_peer_terms",
    "reader",
    "reader_for",
    "readers",
    "sniff",
    "translate",
]

# name -> module of the readers of tools that target several clouds (see the docstring for
# a reader's interface); a tool of one cloud is its provider package's (`peers.READERS`).
SHARED_READERS: dict[str, str] = {
    "skyserve": "archform.spec.peers.skyserve",
    "skypilot": "archform.spec.peers.skypilot",
}


@cache
def readers() -> dict[str, str]:
    """Every registered reader, name -> module: each provider's (in list order), then shared."""
    out: dict[str, str] = {}
    for name in providers.names():
        out.update(getattr(providers.part(name, "peers"), "READERS", {}))
    out.update(SHARED_READERS)
    return out


def reader(name: str) -> ModuleType:
    """The reader module registered under `name`, imported on first use."""
    return importlib.import_module(readers()[name])


def sniff(text: str) -> bool:
    """Some registered reader recognises this file's text as its format (discovery)."""
    return any(reader(name).sniff(text) for name in readers())


def reader_for(data: Any) -> ModuleType | None:
    """The reader that claims this parsed document, or None (not a peer document)."""
    if isinstance(data, dict) and "kind" in data:
        return None  # an archform blueprint (or a near miss of one): the loader's
    for name in readers():
        module = reader(name)
        if module.claims(data):
            return module
    return None


def translate(raw: RawDocument) -> tuple[RawDocument, PeerInfo | None]:
    """The archform document a peer document maps to (raises SpecError), else `raw` as is."""
    module = reader_for(raw.data)
    if module is None:
        return raw, None
    mapper = Mapper(raw, module.NAME, module.TITLE)
    module.read(mapper)
    return mapper.finish()


def in_peer_terms(problems: list[SpecProblem], info: PeerInfo) -> list[SpecProblem]:
    """Validation problems of a mapped document, each naming the peer key it came from.

    `compute.instance_type: ...` becomes `Scheduling.SlurmQueues[0]...InstanceType
    (compute.instance_type): ...`; the position is already the peer key's.
    """
    out: list[SpecProblem] = []
    for problem in problems:
        origin = info.origins.get(parse_path(problem.path)) if problem.path else None
        prefix = f"{problem.path}: "
        if origin is None or not origin.path or not problem.message.startswith(prefix):
            out.append(problem)
            continue
        message = f"{origin.path} ({problem.path}): {problem.message[len(prefix) :]}"
        out.append(replace(problem, message=message))
    return out

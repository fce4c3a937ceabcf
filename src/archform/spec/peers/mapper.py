"""The Mapper: what a peer reader writes archform data through, keeping every position.

Each `put` records three things for the archform location it writes: the value, the peer
key's position (SourceMap.keys) and the peer value's position (SourceMap.values), and an
Origin (peer path + position) for `archform import`'s comments. The SourceMap built here is
the one the validated Document carries, so every consumer of positions is unchanged.
"""

from __future__ import annotations

import copy
import difflib
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from archform.spec.errors import Pos, SpecError, SpecProblem
from archform.spec.paths import Loc, format_path
from archform.spec.source import RawDocument, SourceMap

NOTE_ROOT = "peer"
"""Notes are positioned in the SourceMap under ("peer", *peer path) (see PeerNote.loc)."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where one archform value came from in the peer file."""

    path: str  # the peer path, e.g. Scheduling.SlurmQueues[0].ComputeResources[0].MaxCount
    pos: Pos
    why: str = ""  # how it was derived, when not copied as is ("GiB -> TiB")


@dataclass(frozen=True, slots=True)
class PeerNote:
    """A peer key archform did not map (info), or a caveat about one (warning)."""

    source: Loc  # the peer path
    pos: Pos
    message: str
    severity: Literal["info", "warning"] = "info"

    @property
    def loc(self) -> Loc:
        """The location lint findings about this note use (positioned at the peer key)."""
        return (NOTE_ROOT, *self.source)

    @property
    def path(self) -> str:
        """The peer path as text."""
        return format_path(self.source)


@dataclass(frozen=True, slots=True)
class PeerInfo:
    """What a peer document became: its format, the data mapped, origins and notes."""

    format: str
    title: str
    mapped: dict[str, Any]  # what the reader put, before archform's defaults
    origins: dict[Loc, Origin]
    notes: tuple[PeerNote, ...]


_NAME_CHARS = re.compile(r"[^a-z0-9-]+")


def name_from_file(display: str) -> str:
    """An archform document name from the peer file's name (`cluster-p5.yaml` -> cluster-p5)."""
    stem = _NAME_CHARS.sub("-", PurePath(display).stem.lower()).strip("-")
    if not stem or not stem[0].isalpha():
        stem = "peer-" + stem if stem else "peer"
    return stem[:39].rstrip("-")


@dataclass
class Mapper:
    """Maps one peer document onto archform data; see `archform.spec.peers` for the API."""

    raw: RawDocument
    format: str
    title: str
    kind: str = "TrainingCluster"
    name: str | None = None
    out: dict[str, Any] = field(default_factory=dict)
    origins: dict[Loc, Origin] = field(default_factory=dict)
    notes: list[PeerNote] = field(default_factory=list)
    problems: list[SpecProblem] = field(default_factory=list)
    _keys: dict[Loc, Pos] = field(default_factory=dict)
    _values: dict[Loc, Pos] = field(default_factory=dict)
    _noted: set[Loc] = field(default_factory=set)
    at: dict[Loc, Pos] = field(default_factory=dict)
    """Positions of peer locations inside a value (a flag in a `run` script), by reader."""

    @property
    def data(self) -> Any:
        """The peer document as plain data."""
        return self.raw.data

    @property
    def file(self) -> str:
        """The peer file's display name."""
        return self.raw.file

    # -- reading the peer document -------------------------------------------------------

    def get(self, src: Loc, default: Any = None) -> Any:
        """The peer value at `src`, or `default` when absent."""
        node = self.raw.data
        for part in src:
            if isinstance(part, int):
                if not isinstance(node, list) or not 0 <= part < len(node):
                    return default
            elif not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def has(self, src: Loc) -> bool:
        """The peer file writes `src`."""
        marker = object()
        return self.get(src, marker) is not marker

    def pos(self, src: Loc, *, prefer: str = "key") -> Pos:
        """Position of the peer key (or value) at `src`, else of its nearest written parent."""
        if src in self.at:
            return self.at[src]
        return self.raw.source.locate(src, prefer=prefer)

    # -- checking the peer's schema --------------------------------------------------------

    def keys(self, src: Loc, allowed: Iterable[str], *, what: str = "Unknown field.") -> None:
        """Every key of the peer mapping at `src` must be one of `allowed` (else an error)."""
        node = self.get(src)
        if node is None:
            return
        if not isinstance(node, dict):
            self.error(src, f"expected a mapping, got {_kind_word(node)}")
            return
        names = list(allowed)
        for key in node:
            if key in names:
                continue
            close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else "keys here: " + ", ".join(names)
            self.error((*src, key), what, hint)

    def expect(self, src: Loc, types: type | tuple[type, ...], expected: str) -> Any:
        """The peer value at `src` when it is of `types`, else an error (and None)."""
        value = self.get(src)
        if value is None:
            return None
        wanted = types if isinstance(types, tuple) else (types,)
        if isinstance(value, bool) and bool not in wanted:
            self.error(src, f"expected {expected}, got {value!r}", prefer="value")
            return None
        if not isinstance(value, types):
            self.error(src, f"expected {expected}, got {_kind_word(value)}", prefer="value")
            return None
        return value

    def one_of(
        self, src: Loc, allowed: Iterable[str], message: str = "Must be one of"
    ) -> str | None:
        """The peer value at `src` when it is one of `allowed`, else an error (and None)."""
        value = self.get(src)
        if value is None:
            return None
        names = list(allowed)
        if value not in names:
            self.error(src, f"{message}: {', '.join(names)}.", prefer="value")
            return None
        return str(value)

    def error(self, src: Loc, message: str, hint: str = "", *, prefer: str = "key") -> None:
        """A problem in the peer's own terms at `src` (the load fails, exit 2)."""
        pos = self.pos(src, prefer=prefer)
        path = format_path(src)
        text = f"{path}: {message}" if path else message
        self.problems.append(SpecProblem(self.file, pos.line, pos.column, text, hint, path))

    # -- writing archform data --------------------------------------------------------------

    def put(self, dst: Loc, value: Any, src: Loc, *, why: str = "") -> None:
        """Write archform `value` at `dst`, positioned at the peer key `src`."""
        _assign(self.out, dst, value)
        self._position(dst, src)
        self.origins[dst] = Origin(format_path(src), self.pos(src), why)

    def anchor(self, dst: Loc, src: Loc) -> None:
        """Position the archform container at `dst` at the peer key `src`."""
        self._keys[dst] = self.pos(src)
        self._values[dst] = self.pos(src, prefer="value")

    def _position(self, dst: Loc, src: Loc) -> None:
        key, value = self.pos(src), self.pos(src, prefer="value")
        self._keys[dst] = key
        self._values[dst] = value
        for depth in range(len(dst) - 1, 0, -1):  # containers default to their first value
            self._keys.setdefault(dst[:depth], key)
            self._values.setdefault(dst[:depth], value)

    # -- what does not map ------------------------------------------------------------------

    def unmapped(self, src: Loc, why: str) -> None:
        """Report the peer key `src` once, as an info finding: archform has no counterpart."""
        self._note(src, why, "info")

    def rest(
        self,
        src: Loc,
        mapped: Iterable[str],
        reasons: Mapping[str, str] | None = None,
        default: str = "archform's blueprint has no counterpart; not checked",
    ) -> None:
        """Report every key of the peer mapping at `src` not in `mapped` as unmapped.

        `reasons` gives a key's own reason (by key name); the rest get `default`.
        """
        node = self.get(src)
        if not isinstance(node, dict):
            return
        done = set(mapped)
        for key in node:
            if key not in done:
                self.unmapped((*src, key), (reasons or {}).get(str(key), default))

    def warn(self, src: Loc, why: str) -> None:
        """Report a caveat about the peer key `src` once, as a warning finding."""
        self._note(src, why, "warning")

    def _note(self, src: Loc, why: str, severity: Literal["info", "warning"]) -> None:
        if src in self._noted:
            return
        self._noted.add(src)
        self.notes.append(PeerNote(src, self.pos(src), why, severity))

    # -- result --------------------------------------------------------------------------------

    def finish(self) -> tuple[RawDocument, PeerInfo]:
        """The archform document (as a RawDocument positioned in the peer file) and its info."""
        if self.problems:
            self.problems.sort(key=lambda p: (p.line, p.column))
            raise SpecError(self.problems)
        start = self.raw.source.start
        data = {
            "version": 1,
            "kind": self.kind,
            "name": self.name or name_from_file(self.file),
            **self.out,
        }
        keys = dict(self._keys)
        values = dict(self._values)
        for note in self.notes:
            keys[note.loc] = note.pos
            values[note.loc] = note.pos
        source = SourceMap(self.file, start, keys, values, self.raw.source.lines)
        info = PeerInfo(
            self.format, self.title, copy.deepcopy(data), dict(self.origins), tuple(self.notes)
        )
        return RawDocument(self.file, self.raw.index, data, source), info


def _assign(root: dict[str, Any], loc: Loc, value: Any) -> None:
    node: Any = root
    for part, following in itertools.pairwise(loc):
        child = _child(node, part)
        if child is None:
            child = [] if isinstance(following, int) else {}
            _set(node, part, child)
        node = child
    _set(node, loc[-1], value)


def _child(node: Any, part: str | int) -> Any:
    if isinstance(part, int):
        return node[part] if part < len(node) else None
    return node.get(part)


def _set(node: Any, part: str | int, value: Any) -> None:
    if isinstance(part, int):
        if part == len(node):
            node.append(value)
        elif part < len(node):
            node[part] = value
        else:
            raise IndexError(f"peer mapper: list index {part} written before {len(node)}")
    else:
        node[part] = value


def _kind_word(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__

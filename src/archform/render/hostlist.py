"""Slurm hostlist expressions (gpu[001-032]) and integer range lists (0-23,48-71)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from archform.spec import slurm

_TAIL = re.compile(r"^(.*?)(\d+)$")


def compress(names: Iterable[str], max_range: int | None = None) -> str:
    """Compress host names into a Slurm hostlist: ``a-gpu[001-004,007],b``.

    Names sharing a prefix and a zero-padded width collapse into one bracket; order of
    first appearance of each prefix is kept, numbers are sorted within a bracket. No range
    names more than `max_range` hosts (default: Slurm's MAX_RANGE, 65536): a longer run
    is split, ``gpu[000001-065536,065537-098304]``, as slurmctld refuses larger ranges.
    """
    limit = max_range or slurm.hostlist_max_range()
    groups: dict[tuple[str, int], list[int]] = {}
    singles: list[str] = []
    order: list[tuple[str, int] | str] = []
    for name in names:
        match = _TAIL.fullmatch(name)
        if not match:
            if name not in singles:
                singles.append(name)
                order.append(name)
            continue
        key = (match.group(1), len(match.group(2)))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(match.group(2)))
    parts: list[str] = []
    for item in order:
        if isinstance(item, str):
            parts.append(item)
            continue
        prefix, width = item
        numbers = sorted(set(groups[item]))
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        ranges = []
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1 and n - start < limit:
                prev = n
                continue
            ranges.append(
                f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}"
            )
            if n is not None:
                start = prev = n
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts)


def expand(expr: str) -> list[str]:
    """Expand a hostlist made by `compress` (used by tests and verifiers)."""
    out: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", expr):
        match = re.fullmatch(r"(.*?)\[([^\]]*)\]", part)
        if not match:
            out.append(part)
            continue
        prefix, body = match.groups()
        for chunk in body.split(","):
            lo, _, hi = chunk.partition("-")
            width = len(lo)
            for n in range(int(lo), int(hi or lo) + 1):
                out.append(f"{prefix}{n:0{width}d}")
    return out


def int_list(text: str) -> set[int]:
    """'0-23,48-71' -> {0, ..., 23, 48, ..., 71} (Linux cpulist, gres.conf Cores= syntax)."""
    out: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def int_ranges(values: list[int]) -> str:
    """Sorted [0, 1, 2, 5] -> '0-2,5' (the inverse of `int_list`)."""
    parts: list[str] = []
    start = prev = values[0]
    for value in [*values[1:], None]:
        if value is not None and value == prev + 1:
            prev = value
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if value is not None:
            start = prev = value
    return ",".join(parts)

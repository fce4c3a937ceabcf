"""Spec paths: ``("storage", 0, "kind")`` <-> ``storage[0].kind``."""

from __future__ import annotations

Loc = tuple[str | int, ...]


def format_path(loc: Loc) -> str:
    """Render a location tuple as a dotted path with list indices."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def parse_path(text: str) -> Loc:
    """Parse ``storage[0].kind`` back into a location tuple."""
    loc: list[str | int] = []
    for chunk in text.split("."):
        name, _, rest = chunk.partition("[")
        if name:
            loc.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            loc.append(int(index))
            rest = rest.removeprefix("[")
    return tuple(loc)

"""`archform import`'s output: the blueprint a peer file maps to, each value's origin beside it.

The text is YAML written here (not by a YAML library) so every value can carry its comment:
``# from cluster.yaml:12:7 Scheduling.SlurmQueues[0].Name``. Strings are always written
double-quoted in JSON's escaping, which YAML reads back unchanged. The first line records the
SHA-256 of the rest, so a later import can tell an untouched output (safe to replace) from
one the user edited (refused without --force).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import PurePath
from typing import Any

from archform.spec.paths import Loc
from archform.spec.peers.mapper import Origin, PeerInfo

HEADER = "# archform import"
_DIGEST = re.compile(r"^# archform import .* sha256:([0-9a-f]{64})\n", re.ASCII)
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_PLAIN_VALUE = re.compile(r"^[A-Za-z/][A-Za-z0-9._/-]*$")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})


def render(info: PeerInfo, source_file: str) -> str:
    """The blueprint text for one peer document (header line, body, what did not map)."""
    name = PurePath(source_file).name
    lines = [
        f"# Imported from {name} ({info.title}).",
        "# Each value names where it came from; values without a comment are archform's",
        "# defaults (the catalog fills GPU, CPU and fabric from the instance type).",
    ]
    _emit(info.mapped, (), 0, lines, info.origins, name)
    if info.notes:
        lines.append("")
        lines.append(f"# Not mapped from {name} (linting it reports each as LNT003):")
        for note in sorted(info.notes, key=lambda n: (n.pos.line, n.pos.column)):
            where = f"{name}:{note.pos.line}:{note.pos.column}"
            lines.append(f"# - {where} {note.path} [{note.severity}]: {_one_line(note.message)}")
    body = "\n".join(lines) + "\n"
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f"{HEADER} of {name} sha256:{digest}\n{body}"


def untouched(text: str) -> bool:
    """The text is an import output nobody edited since (its recorded digest still holds)."""
    match = _DIGEST.match(text)
    if match is None:
        return False
    body = text[match.end() :]
    return hashlib.sha256(body.encode("utf-8")).hexdigest() == match.group(1)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _comment(loc: Loc, origins: dict[Loc, Origin], file: str) -> str:
    origin = origins.get(loc)
    if origin is None:
        return ""
    text = f"  # from {file}:{origin.pos.line}:{origin.pos.column}"
    if origin.path:
        text += f" {origin.path}"
    if origin.why:
        text += f" ({_one_line(origin.why)})"
    return text


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if _PLAIN_VALUE.match(text) and text.lower() not in _RESERVED:
        return text
    return json.dumps(text, ensure_ascii=False)


def _key(key: str) -> str:
    return key if _PLAIN_KEY.match(key) else json.dumps(key)


def _flow(values: list[Any]) -> str:
    return "[" + ", ".join(_scalar(v) for v in values) + "]"


def _emit(
    node: dict[str, Any],
    loc: Loc,
    indent: int,
    out: list[str],
    origins: dict[Loc, Origin],
    file: str,
    first_prefix: str = "",
) -> None:
    pad = " " * indent
    for i, (key, value) in enumerate(node.items()):
        prefix = first_prefix if i == 0 and first_prefix else pad
        here = (*loc, key)
        head = f"{prefix}{_key(key)}:"
        if isinstance(value, dict) and not value:
            out.append(f"{head} {{}}" + _comment(here, origins, file))
        elif isinstance(value, dict):
            out.append(head + _comment(here, origins, file))
            _emit(value, here, indent + 2, out, origins, file)
        elif isinstance(value, list):
            _emit_list(value, here, head, indent, out, origins, file)
        else:
            out.append(f"{head} {_scalar(value)}" + _comment(here, origins, file))


def _emit_list(
    value: list[Any],
    here: Loc,
    head: str,
    indent: int,
    out: list[str],
    origins: dict[Loc, Origin],
    file: str,
) -> None:
    scalars = all(not isinstance(v, dict | list) for v in value)
    if scalars and (here in origins or not value):
        out.append(f"{head} {_flow(value)}" + _comment(here, origins, file))
        return
    out.append(head + _comment(here, origins, file))
    pad = " " * (indent + 2)
    for j, item in enumerate(value):
        item_loc = (*here, j)
        if isinstance(item, dict):
            _emit(item, item_loc, indent + 4, out, origins, file, first_prefix=pad + "- ")
        else:
            out.append(f"{pad}- {_scalar(item)}" + _comment(item_loc, origins, file))

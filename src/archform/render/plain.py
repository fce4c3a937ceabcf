"""Typed view records to plain data, where a view is embedded as a literal in generated code.

Views are frozen dataclasses; the quoting filters accept only plain values (str, int,
float, bool, None, lists and str-keyed dicts of those). `plain` converts a view, field by
field in declaration order (so the literal's key order is the dataclass's field order),
wherever a whole record becomes a literal: settings.py of a training project, the FLEET
dict of a fleet program.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

Json = str | int | float | bool | None | list["Json"] | dict[str, "Json"]


def plain(value: object) -> Json:
    """`value` as plain data: dataclasses become dicts, tuples lists; anything else refused."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        out: dict[str, Json] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"mapping key {key!r} is not a string")
            out[key] = plain(item)
        return out
    raise TypeError(f"{type(value).__name__} is not plain data")

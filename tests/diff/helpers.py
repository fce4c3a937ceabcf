"""Edit a bundled blueprint and diff it against the original, through the real loader."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from ruamel.yaml import YAML

from archform.diff import DiffReport, diff_sets
from archform.spec import load_text
from support import BLUEPRINTS

Mutate = Callable[[list[dict[str, Any]]], None]


def documents(stem: str) -> list[dict[str, Any]]:
    yaml = YAML()
    return list(yaml.load_all((BLUEPRINTS / f"{stem}.yaml").read_text("utf-8")))


def dump(docs: list[dict[str, Any]]) -> str:
    yaml = YAML()
    out = io.StringIO()
    yaml.dump_all(docs, out)
    return out.getvalue()


def diff_edit(stem: str, mutate: Mutate) -> tuple[DiffReport, str]:
    """Diff the blueprint `stem` against a copy edited by `mutate`; also return the new text."""
    old_text = (BLUEPRINTS / f"{stem}.yaml").read_text("utf-8")
    docs = documents(stem)
    mutate(docs)
    new_text = dump(docs)
    return diff_sets(load_text(old_text, "old.yaml"), load_text(new_text, "new.yaml")), new_text

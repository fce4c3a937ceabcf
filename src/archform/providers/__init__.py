"""The provider registry: one package per provider under `archform/providers/`, found here.

A provider is a package `archform/providers/<name>/` whose `__init__.py` sets `RANK` (the
provider's place in lists the user reads: the schema's enum, error messages) and whose
submodules each belong to one layer and expose one capability object:

    spec.py      SPEC    (archform.spec.provider.ProviderSpec): blueprint facts and checks
    render/      RENDER  (archform.render.provider.ProviderRender): facts the shared
                         targets read and the provider's own targets
    diff.py      DIFF    (archform.diff.provider.ProviderDiff): change impact
    diagram.py   DIAGRAM (archform.diagram.provider.ProviderDiagram): diagram words

and whose `templates/` folder (optional) holds its own templates and shipped files: the one
Jinja environment (`archform.render.env`) finds them as ``<name>/<path>``, beside the shared
ones under the repository's templates/ (`templates()` says where; no `templates/`: the
provider renders nothing of its own).

Shared code never imports a provider package: it asks the layer's accessor (e.g.
`archform.spec.provider.spec_of(name)`), which loads the submodule through `part()` and
checks it against the layer's Protocol. This module imports nothing of archform, so every
layer may use it; import-linter keeps each provider's submodules in the one-way flow.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path
from types import ModuleType


@cache
def names() -> tuple[str, ...]:
    """Every provider package's name, in RANK order (then by name)."""
    ranked = []
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg:
            rank = getattr(importlib.import_module(f"{__name__}.{info.name}"), "RANK", 1000)
            ranked.append((int(rank), info.name))
    return tuple(name for _, name in sorted(ranked))


@cache
def part(name: str, layer: str) -> ModuleType | None:
    """The `layer` submodule of provider `name` (None: the provider has no such part)."""
    if name not in names():
        raise KeyError(f"no provider package {name!r} (archform/providers/{name}/)")
    try:
        return importlib.import_module(f"{__name__}.{name}.{layer}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}.{layer}":
            raise
        return None


@cache
def templates(name: str) -> Path | None:
    """Provider `name`'s own templates folder, `<package>/templates/` (None: it has none)."""
    if name not in names():
        raise KeyError(f"no provider package {name!r} (archform/providers/{name}/)")
    package = importlib.import_module(f"{__name__}.{name}")
    folder = Path(str(package.__file__)).resolve().parent / "templates"
    return folder if folder.is_dir() else None
